import type { Kysely } from 'kysely';
import type { Store } from '../store/schema.ts';
import { recordAudit } from './audit-log.ts';
import { notify } from './notifications.ts';

/** The platform events of spec §6; webhooks deliver these (next issue). */
export type PlatformEventType =
  | 'build.completed'
  | 'build.failed'
  | 'instance.unhealthy'
  | 'instance.recovered';

export interface PlatformEvent {
  readonly type: PlatformEventType;
  readonly accountId: string;
  readonly databaseId: string;
  readonly databaseName: string;
  /** Spec §6 payload fields beyond databaseId, databaseName and timestamp. */
  readonly fields: Record<string, unknown>;
  readonly message: string;
  readonly severity: 'success' | 'error' | 'info';
  readonly sticky?: boolean;
}

/** Subscribers to platform events beyond audit and notifications (webhooks slot in here). */
export type PlatformEventSink = (
  db: Kysely<Store>,
  event: PlatformEvent,
  payload: Record<string, unknown>,
) => Promise<void>;

/**
 * Records platform events: an audit event, a notification, and whatever sinks are subscribed
 * (webhook delivery subscribes here).
 */
export class PlatformEvents {
  readonly #sinks: PlatformEventSink[] = [];

  subscribe(sink: PlatformEventSink): void {
    this.#sinks.push(sink);
  }

  async emit(db: Kysely<Store>, event: PlatformEvent): Promise<void> {
    const payload = {
      databaseId: event.databaseId,
      databaseName: event.databaseName,
      ...event.fields,
      timestamp: new Date().toISOString(),
    };
    await recordAudit(db, {
      accountId: event.accountId,
      databaseId: event.databaseId,
      entityType: 'database',
      entityId: event.databaseId,
      eventType: event.type,
      payload,
    });
    await notify(db, {
      accountId: event.accountId,
      databaseId: event.databaseId,
      eventType: event.type,
      message: event.message,
      detail: typeof event.fields.error === 'string' ? event.fields.error : null,
      severity: event.severity,
      sticky: event.sticky ?? false,
    });
    for (const sink of this.#sinks) await sink(db, event, payload);
  }
}
