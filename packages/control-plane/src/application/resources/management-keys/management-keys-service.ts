import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import type { StoreDb } from '../../../adapters/store/open-store.ts';
import { notFound } from '../../../domain/errors.ts';
import { newManagementKey } from '../../identity/management-keys.ts';
import type { Principal } from '../../identity/principal.ts';
import { iso } from '../common-schemas.ts';
import {
  activeManagementKeys,
  insertManagementKeyRow,
  revokeManagementKeyRow,
} from './management-keys-queries.ts';

/** The account's management keys that are not revoked, newest first. */
export async function listManagementKeys(db: StoreDb, accountId: string) {
  const rows = await activeManagementKeys(db, accountId);
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    createdAt: iso(row.created_at),
    lastUsedAt: iso(row.last_used_at),
  }));
}

/** A new key for the caller; the key itself is in this answer only, the store keeps its hash. */
export async function createManagementKey(
  db: StoreDb,
  { accountId, userId }: Pick<Principal, 'accountId' | 'userId'>,
  name: string,
) {
  const { key, prefix, hash } = newManagementKey();
  const id = randomUUID();
  const createdAt = new Date();
  await db.transaction().execute(async (tx) => {
    await insertManagementKeyRow(tx, {
      id,
      account_id: accountId,
      user_id: userId,
      name,
      prefix,
      key_hash: hash,
      created_at: createdAt,
    });
    await recordAudit(tx, {
      accountId,
      entityType: 'management_key',
      entityId: id,
      eventType: 'management_key.created',
      payload: { name, prefix },
    });
  });
  return { id, name, prefix, createdAt: createdAt.toISOString(), lastUsedAt: null, key };
}

/** Revokes the key at once, or 404 when the caller may not see it. */
export async function revokeManagementKey(
  db: StoreDb,
  { accountId, role, userId }: Pick<Principal, 'accountId' | 'role' | 'userId'>,
  id: string,
): Promise<void> {
  const revoked = await db.transaction().execute(async (tx) => {
    // Members revoke only their own keys (auth/role-policy.ts); admins and owners any.
    const row = await revokeManagementKeyRow(
      tx,
      id,
      accountId,
      role === 'member' ? userId : undefined,
    );
    if (row)
      await recordAudit(tx, {
        accountId,
        entityType: 'management_key',
        entityId: row.id,
        eventType: 'management_key.revoked',
        payload: { prefix: row.prefix },
      });
    return row;
  });
  if (!revoked) throw notFound('Management key');
}
