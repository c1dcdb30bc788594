import { ReplixApiError } from '@replix/client';
import { describe, expect, it } from 'vitest';
import { insteadCommand, withInsteadCommand } from '../src/instead-command.ts';

const ID = '00000000-0000-4000-8000-000000000001';

describe('the command a refusal names', () => {
  it.each([
    ['Resume needs a paused database; this one is failed: use Reconfigure instead.', 'reconfigure'],
    ['The database has no successful build yet: use Rebuild instead.', 'rebuild'],
    [
      'Terminate needs a running, paused or failed database; this one is draft: use Delete instead.',
      'delete',
    ],
    ['Replication is not paused: use Pause replication instead.', 'pause-replication'],
  ])('%s', (reason, command) => {
    expect(insteadCommand(reason, ID)).toBe(`replix db ${command} ${ID}`);
  });

  it('adds nothing to a reason that names no action', () => {
    expect(
      insteadCommand('Another action is queued: provision. Cancel it first.', ID),
    ).toBeUndefined();
  });

  it('appends the command to a refused action’s message, and passes other errors through', async () => {
    const refused = new ReplixApiError(
      'action_not_allowed',
      'Provision needs a draft or terminated database; this one is failed: use Rebuild instead.',
      409,
    );
    await expect(withInsteadCommand(ID, () => Promise.reject(refused))).rejects.toMatchObject({
      error: 'action_not_allowed',
      status: 409,
      message: `Provision needs a draft or terminated database; this one is failed: use Rebuild instead. Run: replix db rebuild ${ID}`,
    });
    const missing = new ReplixApiError('not_found', 'Database not found.', 404);
    await expect(withInsteadCommand(ID, () => Promise.reject(missing))).rejects.toBe(missing);
    expect(await withInsteadCommand(ID, async () => 'ok')).toBe('ok');
  });
});
