/**
 * A database's lifecycle: its statuses, the actions it accepts, the status a queued action
 * puts it in and the audit event when the reconciler finishes one. The full set and its
 * transitions are documented as a table in docs/control-plane/lifecycle.md; which action is
 * allowed when is `allowed-actions.ts`, how an accepted one is recorded `database-goals.ts`.
 */
export const DATABASE_STATUSES = [
  'draft',
  'building',
  'deploying',
  'running',
  'pausing',
  'paused',
  'failed',
  'terminating',
  'terminated',
  'deleting',
] as const;

export type DatabaseStatus = (typeof DATABASE_STATUSES)[number];

/** The actions of the allowed-actions matrix (spec §2, AllowedActions). */
export const ACTIONS = [
  'provision',
  'rebuild',
  'reconfigure',
  'redeploy',
  'resize',
  'pause',
  'resume',
  'terminate',
  'delete',
  'reload',
  'pause-replication',
  'resume-replication',
  'cancel-goal',
] as const;

export type Action = (typeof ACTIONS)[number];

/** The transitional status each queued action puts the database in (the reconciler moves on). */
export const QUEUED_STATUS = {
  provision: 'building',
  rebuild: 'building',
  reconfigure: 'deploying',
  redeploy: 'deploying',
  resize: 'deploying',
  resume: 'deploying',
  pause: 'pausing',
  terminate: 'terminating',
  delete: 'deleting',
} as const satisfies Partial<Record<Action, DatabaseStatus>>;

/** The actions the reconciler carries out as a goal. */
export type QueuedAction = keyof typeof QUEUED_STATUS;

/** The audit event the reconciler records when it finishes each queued action. */
export const FINISHED_EVENT: Record<QueuedAction, string> = {
  provision: 'database.provisioned',
  rebuild: 'database.rebuilt',
  redeploy: 'database.redeployed',
  reconfigure: 'database.reconfigured',
  resize: 'database.resized',
  resume: 'database.resumed',
  pause: 'database.paused',
  terminate: 'database.terminated',
  delete: 'database.deleted',
};

/** Whether a stored goal's action is one the reconciler knows how to carry out. */
export function isQueuedAction(action: string): action is QueuedAction {
  return Object.hasOwn(QUEUED_STATUS, action);
}
