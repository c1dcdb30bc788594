/** When checkpoints are written; see docs/replication.md. */
export interface CheckpointSchedule {
  /** A checkpoint is due this long after the last one, when anything changed since. */
  readonly intervalMs: number;
  /** …or as soon as this many row changes were applied since the last one. */
  readonly changes: number;
}

/**
 * How fast a checkpoint is written while the instance serves: writing flat out (about 600 MB/s
 * here) takes the disk and a core from queries and nearly doubles their p99 meanwhile; at this
 * pace the p99 stays within 1.2× (bench/checkpoint.ts). The write before a planned stop, when
 * no new query comes, goes flat out.
 */
export const CHECKPOINT_WRITE_BYTES_PER_SECOND = 48 * 1024 * 1024;

export const DEFAULT_CHECKPOINT_SCHEDULE: CheckpointSchedule = {
  intervalMs: 5 * 60_000,
  changes: 100_000,
};
