import { mulberry32 } from '@replix/testkit/mulberry32';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DurationHistogram } from '../src/threads/duration-histogram.ts';

const BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const config = { name: 'replix_query_duration_seconds', help: 'Query time.', buckets: BUCKETS };

/** Durations over every bucket, bounds exactly among them (a bound belongs to its bucket). */
function durations(count: number, seed: number): number[] {
  const random = mulberry32(seed);
  const values = Array.from({ length: count }, () => 10 ** (random() * 5 - 4.5));
  return [...values, ...BUCKETS, 0, 3];
}

/** The same observations in ours and in prom-client's own histogram, each in a registry. */
function both(values: readonly number[]): { ours: Registry; theirs: Registry } {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new DurationHistogram({ ...config, registers: [ours] });
  const reference = new Histogram({ ...config, registers: [theirs] });
  for (const value of values) {
    histogram.observe(value);
    reference.observe(value);
  }
  return { ours, theirs };
}

describe('DurationHistogram', () => {
  it("writes the exposition text prom-client's Histogram writes for the same observations", async () => {
    const { ours, theirs } = both(durations(5000, 1));
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('replix_query_duration_seconds_bucket{le="0.001"}');
    expect(text).toContain('replix_query_duration_seconds_count 5014');
  });

  it('writes every line with no observation yet, as prom-client does', async () => {
    const { ours, theirs } = both([]);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('adds up over query threads as prom-client histograms do', async () => {
    const threads = [both(durations(300, 2)), both(durations(700, 3))];
    const aggregate = async (side: 'ours' | 'theirs') =>
      AggregatorRegistry.aggregate(
        await Promise.all(threads.map((thread) => thread[side].getMetricsAsJSON())),
      ).metrics();
    expect(await aggregate('ours')).toBe(await aggregate('theirs'));
  });

  it('starts over when the registry resets its metrics', async () => {
    const { ours } = both(durations(10, 4));
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await both([]).ours.metrics());
  });

  it('takes no value that is not a finite number', async () => {
    const registry = new Registry();
    const histogram = new DurationHistogram({ ...config, registers: [registry] });
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
      histogram.observe(value);
    expect(await registry.metrics()).toBe(await both([]).ours.metrics());
  });

  it('refuses bounds that are not finite and ascending', () => {
    for (const buckets of [
      [0.1, 0.1],
      [0.5, 0.1],
      [0.1, Number.POSITIVE_INFINITY],
    ])
      expect(() => new DurationHistogram({ ...config, buckets, registers: [] })).toThrow(
        'buckets must be finite and ascending',
      );
  });
});
