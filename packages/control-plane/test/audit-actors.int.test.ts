import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../src/adapters/events/audit-log.ts';
import {
  EMBEDDED_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { caller, insertDatabase } from './lifecycle-fixtures.ts';

interface Event {
  eventType: string;
  entityName?: string;
  actor?: { type: string; id?: string; name: string };
}

/**
 * Who did it, in the audit log: each event names its actor (the signed-in user's email, the
 * management key's name, or the system for background work) and what it is about by name
 * (a key's name, not its id), also after the key was deleted.
 */
describe.each(EMBEDDED_STORE)('actors and names in the audit log on the %s store', (kind) => {
  let cp: TestControlPlane;
  let owner: { token: string; accountId: string };
  let databaseId: string;

  beforeAll(async () => {
    cp = await startTestControlPlane(kind);
    owner = await caller(cp, 'actors@example.com');
    databaseId = (await insertDatabase(cp, owner, { name: 'shop', status: 'running' })).id;
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('names the user, the management key and the system, and keys by name', async () => {
    const created = await cp.request('POST', '/v1/management-keys', {
      token: owner.token,
      body: { name: 'ci deploys' },
    });
    expect(created.status).toBe(201);
    const managementKey: string = created.body.key;
    const apiKey = await cp.request('POST', `/v1/databases/${databaseId}/api-keys`, {
      token: managementKey,
      body: { name: 'web app' },
    });
    expect(apiKey.status).toBe(201);
    const deleted = await cp.request(
      'DELETE',
      `/v1/databases/${databaseId}/api-keys/${apiKey.body.keyId}`,
      { token: owner.token },
    );
    expect(deleted.status).toBe(204);
    // Background work (builds, deploys, health) records outside any request: the system.
    await recordAudit(cp.context.db, {
      accountId: owner.accountId,
      databaseId,
      entityType: 'database',
      entityId: databaseId,
      eventType: 'database.reconfigured',
    });

    const page = await cp.request('GET', '/v1/account/audit-log', { token: owner.token });
    expect(page.status).toBe(200);
    const events: Event[] = page.body.events;
    const summary = events.map((event) => [event.eventType, event.entityName, event.actor]);
    expect(summary).toEqual([
      ['database.reconfigured', 'shop', { type: 'system', name: 'system' }],
      [
        'api_key.deleted',
        'web app',
        { type: 'user', id: expect.any(String), name: 'actors@example.com' },
      ],
      [
        'api_key.created',
        'web app',
        { type: 'management_key', id: created.body.id, name: 'ci deploys' },
      ],
      [
        'management_key.created',
        'ci deploys',
        { type: 'user', id: expect.any(String), name: 'actors@example.com' },
      ],
    ]);
    // The database's own log says the same.
    const own = await cp.request('GET', `/v1/databases/${databaseId}/audit-log`, {
      token: owner.token,
    });
    expect(own.body.events.map((event: Event) => event.actor?.name)).toEqual([
      'system',
      'actors@example.com',
      'ci deploys',
    ]);
  });
});
