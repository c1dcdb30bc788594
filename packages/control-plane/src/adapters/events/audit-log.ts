import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Store } from '../store/schema.ts';
import { currentActor } from './audit-actor.ts';

export interface AuditEntry {
  readonly accountId: string;
  readonly databaseId?: string | null | undefined;
  readonly entityType: string;
  readonly entityId: string;
  /** `<entity>.<verb>`, e.g. `database.created`; docs/control-plane/audit-and-notifications.md lists them all. */
  readonly eventType: string;
  readonly payload?: Record<string, unknown> | undefined;
}

/**
 * Appends one immutable audit event. Pass the transaction that made the change, if any. The
 * actor is the current request's (`audit-actor.ts`), or the system's outside a request.
 */
export async function recordAudit(db: Kysely<Store>, entry: AuditEntry): Promise<void> {
  const actor = currentActor();
  await db
    .insertInto('audit_events')
    .values({
      id: randomUUID(),
      account_id: entry.accountId,
      database_id: entry.databaseId ?? null,
      entity_type: entry.entityType,
      entity_id: entry.entityId,
      event_type: entry.eventType,
      payload: entry.payload ? JSON.stringify(entry.payload) : null,
      actor_type: actor.type,
      actor_id: actor.id ?? null,
      actor_name: actor.name,
    })
    .execute();
}
