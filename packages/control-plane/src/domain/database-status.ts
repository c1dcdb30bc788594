/**
 * A database's status. The full set and its transitions are documented as a table in
 * docs/control-plane/lifecycle.md.
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
