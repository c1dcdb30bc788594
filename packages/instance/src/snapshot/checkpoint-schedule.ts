/** When checkpoints are written; see docs/replication.md. */
export interface CheckpointSchedule {
  /** A checkpoint is due this long after the last one, when anything changed since. */
  readonly intervalMs: number;
  /** …or as soon as this many row changes were applied since the last one. */
  readonly changes: number;
}

export const DEFAULT_CHECKPOINT_SCHEDULE: CheckpointSchedule = {
  intervalMs: 5 * 60_000,
  changes: 100_000,
};
