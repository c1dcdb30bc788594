/**
 * One `replix serve` child for a hostile suite, kept usable between tests: a test that kills or
 * wedges the instance fails itself, and the next test gets a fresh child, so each test reports
 * on its own shape. Every restart is recorded; the suite's last test requires none.
 */
import type { TestDatabase } from '@replix/testkit';
import { expect } from 'vitest';
import {
  type Answer,
  CHEAP_QUERY,
  CHEAP_ROWS,
  describeAnswer,
  isErrorEnvelope,
  isSuccessEnvelope,
  type ServeChild,
  startServeChild,
} from './hostile-fixture.ts';

/** How long the cheap query may take before the instance counts as wedged. */
const RESPONSIVE_WITHIN_MS = 10_000;

export interface HostileInstance {
  /** The current child; replaced after a crash or a wedge. */
  readonly child: ServeChild;
  /** Why each earlier child was replaced. */
  readonly replaced: readonly string[];
  /** The highest VmHWM seen over every child, in MB (a crashed child's last reading). */
  peakRssMb(): number;
  /** Restarts the child when it is dead or does not answer the cheap query. */
  ensureServing(): Promise<void>;
  stop(): Promise<void>;
}

export async function startHostileInstance(database: TestDatabase): Promise<HostileInstance> {
  let child = await startServeChild(database.url);
  const replaced: string[] = [];
  let peak = 0;
  const samplePeak = () => {
    const reading = child.peakRssMb();
    if (Number.isFinite(reading)) peak = Math.max(peak, reading);
  };
  const sampler = setInterval(samplePeak, 250);
  return {
    get child() {
      return child;
    },
    replaced,
    peakRssMb() {
      samplePeak();
      return peak;
    },
    async ensureServing() {
      samplePeak();
      let reason: string | undefined;
      if (!child.alive()) reason = child.exitReport() ?? 'exited';
      else {
        const answer = await child.query(CHEAP_QUERY, 'POST', child.apiKey, RESPONSIVE_WITHIN_MS);
        if (answer.status !== 200) reason = `cheap query got ${describeAnswer(answer)}`;
      }
      if (reason === undefined) return;
      replaced.push(reason.slice(0, 300));
      await child.stop();
      child = await startServeChild(database.url);
    },
    async stop() {
      clearInterval(sampler);
      await child.stop();
    },
  };
}

/** The cheap primary-key lookup answers correctly, in time. */
export async function expectCheapQueryAnswers(child: ServeChild): Promise<void> {
  const answer = await child.query(CHEAP_QUERY);
  expect(answer.status, `cheap query after: ${describeAnswer(answer)}`).toBe(200);
  expect((answer.body as { data: unknown }).data).toEqual(CHEAP_ROWS);
}

/** Status below 500 and the body one of the two envelopes. */
export function expectEnvelope(answer: Answer): void {
  expect(answer.status, describeAnswer(answer)).toBeGreaterThanOrEqual(200);
  expect(answer.status, describeAnswer(answer)).toBeLessThan(500);
  const envelope =
    answer.status === 200 ? isSuccessEnvelope(answer.body) : isErrorEnvelope(answer.body);
  expect(envelope, `not an envelope: ${describeAnswer(answer)}`).toBe(true);
}
