import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InstanceMetricsReport } from '@replix/instance-protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { combineReplicaMetrics } from '../src/adapters/drivers/combine-replica-metrics.ts';
import { readReplicaLogs } from '../src/adapters/drivers/process/replica-logs.ts';
import { replicaUrlsOf } from '../src/adapters/drivers/replica-urls.ts';
import type { HealthReading } from '../src/application/health/classify-health.ts';
import { combineReplicaHealth } from '../src/application/health/combine-replica-health.ts';

const reading = (overrides: Partial<HealthReading>): HealthReading => ({
  health: 'ok',
  snapshotAgeMs: 100,
  swapCount: 3,
  rowCounts: { item: 2 },
  replicationPaused: false,
  ...overrides,
});
const unreachable = reading({
  health: 'unreachable',
  snapshotAgeMs: null,
  swapCount: null,
  rowCounts: null,
  replicationPaused: null,
});

describe("an instance's health from its replicas'", () => {
  it('is the one reading of a single replica', () => {
    expect(combineReplicaHealth([unreachable])).toBe(unreachable);
  });

  it('is ok when all are, unreachable when none answers, cap_exceeded when any is over its cap', () => {
    expect(combineReplicaHealth([reading({}), reading({})]).health).toBe('ok');
    expect(combineReplicaHealth([unreachable, unreachable]).health).toBe('unreachable');
    expect(combineReplicaHealth([reading({}), reading({ health: 'cap_exceeded' })]).health).toBe(
      'cap_exceeded',
    );
  });

  it('is degraded when only some serve, with the stalest age and the first answering ordinal', () => {
    const combined = combineReplicaHealth([
      unreachable,
      reading({ snapshotAgeMs: 500, swapCount: 7, rowCounts: { item: 3 } }),
      reading({ health: 'degraded', snapshotAgeMs: 900, swapCount: 6 }),
    ]);
    expect(combined).toEqual({
      health: 'degraded',
      snapshotAgeMs: 900,
      swapCount: 7,
      rowCounts: { item: 3 },
      replicationPaused: false,
    });
  });

  it('records the replication pause state only when every answering replica agrees', () => {
    const paused = reading({ replicationPaused: true });
    expect(combineReplicaHealth([paused, paused]).replicationPaused).toBe(true);
    expect(combineReplicaHealth([paused, reading({})]).replicationPaused).toBeNull();
    expect(combineReplicaHealth([paused, unreachable]).replicationPaused).toBe(true);
  });
});

describe("an instance's metrics from its replicas'", () => {
  const report = (overrides: Partial<InstanceMetricsReport>): InstanceMetricsReport => ({
    queriesOk: 10,
    queriesErr: 1,
    snapshotBytes: 1000,
    snapshotAgeSeconds: 2,
    swapCount: 4,
    tableRows: { item: 2 },
    queryDurationSum: 0.5,
    queryDurationCount: 11,
    ...overrides,
  });

  it('sums counts, time and bytes; takes the stalest age and the first replica’s swaps and rows', () => {
    expect(
      combineReplicaMetrics([
        report({}),
        report({ queriesOk: 5, snapshotAgeSeconds: 9, swapCount: 5, tableRows: { item: 3 } }),
      ]),
    ).toEqual({
      queriesOk: 15,
      queriesErr: 2,
      snapshotBytes: 2000,
      snapshotAgeSeconds: 9,
      swapCount: 4,
      tableRows: { item: 2 },
      queryDurationSum: 1,
      queryDurationCount: 22,
    });
    expect(() => combineReplicaMetrics([])).toThrow();
  });
});

describe('replica addresses', () => {
  it('are the recorded replicas’ by ordinal, or the private address of an instance without them', () => {
    expect(
      replicaUrlsOf({ private_url: 'http://a', replica_urls: ['http://a', null, 'http://c'] }),
    ).toEqual(['http://a', 'http://c']);
    expect(replicaUrlsOf({ private_url: 'http://a', replica_urls: null })).toEqual(['http://a']);
    expect(replicaUrlsOf({ private_url: null, replica_urls: null })).toEqual([]);
  });
});

describe("the replicas' logs as one", () => {
  const folder = mkdtempSync(join(tmpdir(), 'replix-replica-logs-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const line = (time: number, msg: string) => `${JSON.stringify({ time, msg })}\n`;

  it('merges in time order with each line naming its replica, one dotted token for all', async () => {
    const zero = join(folder, 'zero.log');
    const one = join(folder, 'one.log');
    writeFileSync(zero, line(1, 'a') + line(4, 'd'));
    writeFileSync(one, line(2, 'b') + line(3, 'c') + line(4, 'e'));
    const first = await readReplicaLogs([zero, one], undefined);
    expect(first.lines).toEqual([
      { timestamp: 1, message: '[replica 0] a' },
      { timestamp: 2, message: '[replica 1] b' },
      { timestamp: 3, message: '[replica 1] c' },
      { timestamp: 4, message: '[replica 0] d' },
      { timestamp: 4, message: '[replica 1] e' },
    ]);
    const sizes = [line(1, 'a') + line(4, 'd'), line(2, 'b') + line(3, 'c') + line(4, 'e')].map(
      (text) => Buffer.byteLength(text),
    );
    expect(first.nextToken).toBe(sizes.join('.'));
    writeFileSync(one, line(2, 'b') + line(3, 'c') + line(4, 'e') + line(5, 'f'));
    expect(await readReplicaLogs([zero, one], first.nextToken)).toEqual({
      lines: [{ timestamp: 5, message: '[replica 1] f' }],
      nextToken: `${sizes[0]}.${(sizes[1] as number) + Buffer.byteLength(line(5, 'f'))}`,
    });
  });

  it('reads one replica’s log as before: a plain offset token, no prefix', async () => {
    const only = join(folder, 'only.log');
    writeFileSync(only, line(1, 'a'));
    expect(await readReplicaLogs([only], undefined)).toEqual({
      lines: [{ timestamp: 1, message: 'a' }],
      nextToken: String(Buffer.byteLength(line(1, 'a'))),
    });
  });
});
