import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseInstanceMetrics } from '../src/parse-instance-metrics.ts';

describe('parseInstanceMetrics', () => {
  it('maps the real /metrics output of an instance (2 ok queries, 1 failed, two tables)', () => {
    // Captured from a real instance over MariaDB (authors: 2 rows, books: 3 rows).
    const text = readFileSync(
      new URL('../../control-plane/test/fixtures/instance-metrics.txt', import.meta.url),
      'utf8',
    );
    expect(parseInstanceMetrics(text)).toEqual({
      queriesOk: 2,
      queriesErr: 1,
      snapshotBytes: 338,
      snapshotAgeSeconds: 0.08,
      swapCount: 0,
      tableRows: { authors: 2, books: 3 },
      queryDurationSum: 0.00434091699999999,
      queryDurationCount: 2,
    });
  });

  it('reads escaped label values, timestamps and exponents, and skips what it does not know', () => {
    const text = [
      '# HELP replix_table_rows Rows per table.',
      '# TYPE replix_table_rows gauge',
      'replix_table_rows{table="we\\"ird\\\\name"} 1.5e3',
      'replix_table_rows{other="x",table="plain"} 7 1700000000000',
      'replix_swap_count 4',
      'replix_query_duration_seconds_bucket{le="+Inf"} 9',
      'process_cpu_seconds_total 12',
      'garbage line without a value',
      'replix_snapshot_bytes NaN',
    ].join('\n');
    expect(parseInstanceMetrics(text)).toEqual({
      queriesOk: 0,
      queriesErr: 0,
      snapshotBytes: 0,
      snapshotAgeSeconds: 0,
      swapCount: 4,
      tableRows: { 'we"ird\\name': 1500, plain: 7 },
      queryDurationSum: 0,
      queryDurationCount: 0,
    });
  });

  it('reads the swap count under its counter name, and under its old name from older instances', () => {
    expect(parseInstanceMetrics('replix_swaps_total 7\n').swapCount).toBe(7);
    expect(parseInstanceMetrics('replix_swap_count 5\n').swapCount).toBe(5);
  });

  it('gives a complete answer of zeros for an empty exposition', () => {
    expect(parseInstanceMetrics('')).toMatchObject({ queriesOk: 0, tableRows: {} });
  });
});
