import { describe, expect, it } from 'vitest';
import { outcomeLines } from '../src/db-action-commands.ts';

describe("a database action's printed outcome", () => {
  it('is the answer on one line, and names each change the action left with the command that applies it', () => {
    expect(outcomeLines('pause', 'db1', { status: 'pausing' })).toEqual([
      'pause db1: status pausing',
    ]);
    expect(outcomeLines('delete', 'db1', undefined)).toEqual(['delete db1: done']);
    expect(
      outcomeLines('reconfigure', 'db1', {
        status: 'deploying',
        notApplied: [{ setting: 'schema', appliedBy: 'rebuild' }],
      }),
    ).toEqual([
      'reconfigure db1: status deploying',
      'not applied: the source schema or schema config changed since the current build; rebuild applies it: npx replix db rebuild db1',
    ]);
    expect(outcomeLines('reconfigure', 'db1', { status: 'deploying', notApplied: [] })).toEqual([
      'reconfigure db1: status deploying',
    ]);
  });
});
