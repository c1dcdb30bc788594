import type { InstanceMetricsReport } from '@replix/instance-protocol';

/**
 * One instance's metrics from its replicas' (by ordinal, those that answered): query counts,
 * query time and snapshot bytes are summed (the instance's whole work and memory), the snapshot
 * age is the stalest replica's, and the swap count and table rows are the lowest answering
 * ordinal's (every replica follows the same source, so they differ only for a moment).
 */
export function combineReplicaMetrics(
  reports: readonly InstanceMetricsReport[],
): InstanceMetricsReport {
  const [first] = reports;
  if (!first) throw new Error('No replica metrics to combine.');
  const sum = (pick: (report: InstanceMetricsReport) => number) =>
    reports.reduce((total, report) => total + pick(report), 0);
  return {
    queriesOk: sum((report) => report.queriesOk),
    queriesErr: sum((report) => report.queriesErr),
    snapshotBytes: sum((report) => report.snapshotBytes),
    snapshotAgeSeconds: Math.max(...reports.map((report) => report.snapshotAgeSeconds)),
    swapCount: first.swapCount,
    tableRows: first.tableRows,
    queryDurationSum: sum((report) => report.queryDurationSum),
    queryDurationCount: sum((report) => report.queryDurationCount),
  };
}
