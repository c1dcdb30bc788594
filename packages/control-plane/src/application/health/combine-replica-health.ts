import type { HealthReading, InstanceHealth } from './classify-health.ts';

/**
 * An instance's health from its replicas' readings (by ordinal): `ok` when every replica is,
 * `unreachable` when none answers, `cap_exceeded` when any is over its memory cap (a resize is
 * the way out either way), and otherwise `degraded`: some replicas serve and some do not (dead,
 * restarting, replication lost), so the endpoint answers from fewer replicas than it should.
 * The snapshot age is the stalest replica's; swap count and row counts are the lowest answering
 * ordinal's; the replication pause state is recorded only when every answering replica agrees.
 */
export function combineReplicaHealth(readings: readonly HealthReading[]): HealthReading {
  if (readings.length === 1) return readings[0] as HealthReading;
  const answering = readings.filter((reading) => reading.health !== 'unreachable');
  const [first] = answering;
  if (!first) return readings[0] as HealthReading;
  const health: InstanceHealth = readings.every((reading) => reading.health === 'ok')
    ? 'ok'
    : readings.some((reading) => reading.health === 'cap_exceeded')
      ? 'cap_exceeded'
      : 'degraded';
  const ages = answering.flatMap((reading) =>
    reading.snapshotAgeMs === null ? [] : [reading.snapshotAgeMs],
  );
  const paused = new Set(
    answering.flatMap((reading) =>
      reading.replicationPaused === null ? [] : [reading.replicationPaused],
    ),
  );
  return {
    health,
    snapshotAgeMs: ages.length > 0 ? Math.max(...ages) : null,
    swapCount: first.swapCount,
    rowCounts: first.rowCounts,
    replicationPaused: paused.size === 1 ? [...paused][0] === true : null,
  };
}
