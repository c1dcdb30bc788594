import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  METRICS_RETENTION_MS,
  METRICS_SAMPLE_INTERVAL_MS,
} from '../src/adapters/store/metrics-samples.ts';

const doc = readFileSync(new URL('../../../docs/limits.md', import.meta.url), 'utf8');

function row(label: string): string {
  const found = doc.split('\n').find((line) => line.startsWith('|') && line.includes(label));
  if (!found) throw new Error(`docs/limits.md has no row about ${label}`);
  return found;
}

describe('docs/limits.md on the control plane', () => {
  it('gives the metrics history its sample interval and retention', () => {
    expect(row('`METRICS_SAMPLE_INTERVAL_MS`')).toMatch(
      new RegExp(`\\| ${METRICS_SAMPLE_INTERVAL_MS / 1000} s \\|$`),
    );
    expect(row('`METRICS_RETENTION_MS`')).toMatch(
      new RegExp(`\\| ${METRICS_RETENTION_MS / 3600_000} h \\|$`),
    );
  });
});
