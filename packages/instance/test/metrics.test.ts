import { expect, test } from 'vitest';
import type { SnapshotController } from '../src/snapshot/snapshot-controller.ts';
import { InstanceMetrics } from '../src/threads/metrics.ts';

/** The two things the gauges read of a controller, before any snapshot is served. */
const noSnapshot = {
  current: () => undefined,
  queryWorkingBytes: () => 0,
} as unknown as SnapshotController;

const sample = (text: string, name: string) => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

test('queries are counted by outcome and their durations observed, once each, when read', async () => {
  const metrics = new InstanceMetrics(noSnapshot);
  metrics.recordQuery(true, 0.0002);
  metrics.recordQuery(true, 0.003);
  metrics.recordQuery(true, 2);
  metrics.recordQuery(false, 0);
  for (let read = 0; read < 2; read++) {
    const text = await metrics.registry.metrics();
    expect(sample(text, 'replix_queries_total{outcome="ok"}')).toBe(3);
    expect(sample(text, 'replix_queries_total{outcome="error"}')).toBe(1);
    expect(sample(text, 'replix_query_duration_seconds_count')).toBe(3);
    expect(sample(text, 'replix_query_duration_seconds_bucket{le="0.001"}')).toBe(1);
    expect(sample(text, 'replix_query_duration_seconds_bucket{le="2.5"}')).toBe(3);
    expect(sample(text, 'replix_query_duration_seconds_sum')).toBeCloseTo(2.0032, 6);
  }
});

test('no observation is lost between two reads, however many queries ran', async () => {
  const metrics = new InstanceMetrics(noSnapshot);
  expect(sample(await metrics.registry.metrics(), 'replix_queries_total{outcome="ok"}')).toBe(0);
  for (let i = 0; i < 10_000; i++) metrics.recordQuery(true, 0.0001);
  const text = await metrics.registry.metrics();
  expect(sample(text, 'replix_queries_total{outcome="ok"}')).toBe(10_000);
  expect(sample(text, 'replix_query_duration_seconds_count')).toBe(10_000);
});

test('the swap count is a counter named by the conventions, read from the controller at each scrape', async () => {
  let swapCount = 3;
  const controller = {
    current: () => ({
      swapCount,
      ageMs: 1500,
      generation: { byteSize: () => 100, rowCounts: () => ({ items: 2 }) },
    }),
    queryWorkingBytes: () => 0,
  } as unknown as SnapshotController;
  const metrics = new InstanceMetrics(controller);
  const first = await metrics.registry.metrics();
  expect(first).toContain('# TYPE replix_swaps_total counter');
  expect(sample(first, 'replix_swaps_total')).toBe(3);
  expect(sample(first, 'replix_snapshot_age_seconds')).toBe(1.5);
  swapCount = 5;
  expect(sample(await metrics.registry.metrics(), 'replix_swaps_total')).toBe(5);
});
