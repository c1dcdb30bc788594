import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../../application/identity/principal.ts';

/** Who made a change the audit log records: a user, a management key, or the system. */
export interface AuditActor {
  readonly type: 'user' | 'management_key' | 'system';
  /** The user's or the key's id; none for the system. */
  readonly id?: string | undefined;
  /** The user's email, the key's name, or "system". */
  readonly name: string;
}

export const SYSTEM_ACTOR: AuditActor = { type: 'system', name: 'system' };

/**
 * The actor of the request being handled. Set once per request by the API (a hook, so no
 * service passes it along); background roles have none, and their changes are the system's.
 */
const requestActor = new AsyncLocalStorage<AuditActor>();

export function actorOf(principal: Principal): AuditActor {
  return principal.managementKey
    ? { type: 'management_key', id: principal.managementKey.id, name: principal.managementKey.name }
    : { type: 'user', id: principal.userId, name: principal.email };
}

/** Runs `work` (the rest of a request) with `actor` as the one its audit events name. */
export function runAsActor<T>(actor: AuditActor, work: () => T): T {
  return requestActor.run(actor, work);
}

/** The actor of the current request; the system outside one. */
export function currentActor(): AuditActor {
  return requestActor.getStore() ?? SYSTEM_ACTOR;
}
