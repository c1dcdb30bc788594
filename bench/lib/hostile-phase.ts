/**
 * The phases of `bench/hostile.ts`: each puts one kind of hostile load on the instance for a
 * while; the runner meanwhile sends another key's cheap lookup every 50 ms and watches the
 * instance's memory, so every phase is measured the same way. A new kind of load is a
 * `HostilePhase` in `hostile-phases/` and one line in the bench's list.
 */

import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import {
  type Answer,
  CHEAP_QUERY,
  CHEAP_ROWS,
  INSTANCE_MEMORY_MB,
  type ServeChild,
} from '../../packages/instance/test/hostile-fixture.ts';
import { percentile } from './percentile.ts';

/** A goal of a phase beside the runner's own (cheap-query p99, peak RSS). */
export interface PhaseGoal {
  readonly measure: string;
  readonly value: number | string;
  readonly goal: string;
  readonly met: boolean;
}

/** What a phase's own clients saw. */
export interface PhaseReport {
  /** Counts by outcome (`200`, `429 too_many_requests`, `cut by the instance`, …). */
  readonly outcomes: Readonly<Record<string, number>>;
  readonly goals?: readonly PhaseGoal[];
}

export interface HostilePhase {
  readonly name: string;
  /**
   * Puts the phase's load on `child` for about `seconds` (it may take a little longer to wind
   * down) and reports what its clients saw. Loads use `child.apiKey`; the runner's cheap
   * lookups use another key (`child.adminKey`).
   */
  run(child: ServeChild, seconds: number): Promise<PhaseReport>;
}

export const CHEAP_EVERY_MS = 50;
export const GOAL_CHEAP_P99_MS = 100;

export interface PhaseResult {
  readonly name: string;
  /** The machine's 1-minute load average at the end: above 2 on 2 cores, others shared the CPU. */
  readonly load1m: number;
  readonly answered: number;
  readonly wrong: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  /** The instance's peak RSS during the phase (VmHWM, reset at its start), MB. */
  readonly peakRssMb: number;
  readonly alive: boolean;
  readonly report: PhaseReport;
  readonly goals: readonly PhaseGoal[];
}

/** The cheap query every 50 ms for `ms`, not waiting for earlier ones: a stall shows. */
async function cheapEvery50ms(child: ServeChild, key: string, ms: number) {
  const latencies: number[] = [];
  let wrong = 0;
  const inFlight: Promise<void>[] = [];
  const record = (answer: Answer) => {
    const rows = (answer.body as { data?: unknown } | undefined)?.data;
    if (answer.status === 200 && JSON.stringify(rows) === JSON.stringify(CHEAP_ROWS))
      latencies.push(answer.ms);
    else wrong++;
  };
  const timer = setInterval(
    () => inFlight.push(child.query(CHEAP_QUERY, 'POST', key).then(record)),
    CHEAP_EVERY_MS,
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  clearInterval(timer);
  await Promise.all(inFlight);
  return { latencies, wrong };
}

/** Resets the child's VmHWM (Linux's clear_refs), so the next reading is this phase's peak. */
function resetPeakRss(child: ServeChild): void {
  try {
    writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
  } catch {
    // Not allowed here: the peak read later is since the start.
  }
}

/** Runs `phase` for `seconds` while measuring the cheap query and the instance's memory. */
export async function runPhase(
  child: ServeChild,
  phase: HostilePhase,
  seconds: number,
): Promise<PhaseResult> {
  resetPeakRss(child);
  const [cheap, report] = await Promise.all([
    cheapEvery50ms(child, child.adminKey ?? child.apiKey, seconds * 1000),
    phase.run(child, seconds),
  ]);
  const alive = child.alive();
  const peakRssMb = alive ? child.peakRssMb() : Number.NaN;
  const p99Ms = percentile(cheap.latencies, 99);
  return {
    name: phase.name,
    load1m: loadavg()[0]!,
    answered: cheap.latencies.length,
    wrong: cheap.wrong,
    p50Ms: percentile(cheap.latencies, 50),
    p95Ms: percentile(cheap.latencies, 95),
    p99Ms,
    peakRssMb,
    alive,
    report,
    goals: [
      {
        measure: 'cheap p99 (ms), every lookup right',
        value: p99Ms,
        goal: `≤ ${GOAL_CHEAP_P99_MS}`,
        met: p99Ms <= GOAL_CHEAP_P99_MS && cheap.wrong === 0,
      },
      {
        measure: 'instance peak RSS, VmHWM (MB)',
        value: peakRssMb,
        goal: `≤ ${INSTANCE_MEMORY_MB}`,
        met: alive && peakRssMb <= INSTANCE_MEMORY_MB,
      },
      ...(report.goals ?? []),
    ],
  };
}
