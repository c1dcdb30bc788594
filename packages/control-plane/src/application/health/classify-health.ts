/** The spec's instance health values. */
export type InstanceHealth = 'ok' | 'degraded' | 'cap_exceeded' | 'unreachable';

/** The parts of an instance's `/health/detail` document the monitor records. */
export interface HealthDetail {
  readonly status?: unknown;
  readonly memory?: { readonly cap_exceeded?: unknown } | null;
  readonly snapshot?: {
    readonly age_ms?: unknown;
    readonly swap_count?: unknown;
    readonly row_counts?: unknown;
  } | null;
  readonly replication?: { readonly paused?: unknown } | null;
}

export interface HealthReading {
  readonly health: InstanceHealth;
  readonly snapshotAgeMs: number | null;
  readonly swapCount: number | null;
  readonly rowCounts: Record<string, number> | null;
  /** Whether the instance's replication is paused, as it says; null when it did not say. */
  readonly replicationPaused: boolean | null;
}

const UNREACHABLE: HealthReading = {
  health: 'unreachable',
  snapshotAgeMs: null,
  swapCount: null,
  rowCounts: null,
  replicationPaused: null,
};

const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);

/**
 * Reads one `/health/detail` answer: no answer, a 5xx or anything but a status document is
 * `unreachable`; over its memory cap is `cap_exceeded` (whatever else it reports); the
 * instance's own `degraded` (replication lost or retrying, a failed reload) is `degraded`.
 */
export function classifyHealth(
  answer: { status: number; body: HealthDetail | undefined } | undefined,
): HealthReading {
  if (!answer || answer.status >= 300 || !answer.body) return UNREACHABLE;
  const { body } = answer;
  let health: InstanceHealth;
  if (body.status === 'cap_exceeded' || body.memory?.cap_exceeded === true) health = 'cap_exceeded';
  else if (body.status === 'ok') health = 'ok';
  else if (body.status === 'degraded') health = 'degraded';
  else return UNREACHABLE;
  const rowCounts = body.snapshot?.row_counts;
  return {
    health,
    snapshotAgeMs: numberOrNull(body.snapshot?.age_ms),
    swapCount: numberOrNull(body.snapshot?.swap_count),
    rowCounts:
      rowCounts && typeof rowCounts === 'object' ? (rowCounts as Record<string, number>) : null,
    replicationPaused:
      typeof body.replication?.paused === 'boolean' ? body.replication.paused : null,
  };
}
