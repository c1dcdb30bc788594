import { performance } from 'node:perf_hooks';
import { EngineError } from '../errors.ts';

/** What one query may spend (schema config `query.*`; docs/limits.md). */
export interface QueryLimits {
  /** Wall-clock milliseconds from the start of execution. */
  readonly timeoutMs: number;
  /** Rows written into the answer, counted across every nesting level. */
  readonly maxRows: number;
  /** Bytes of the answer's JSON. */
  readonly maxResponseBytes: number;
}

/**
 * Work done by the executor: a generator that yields whenever the query has used up its time
 * slice, so a caller may let other work run before resuming it (`runCooperatively`), or ignore
 * the yields and run it to the end (`runToEnd`). Either way the budget's deadline holds.
 */
export type Work<T> = Generator<void, T, void>;

/** How long a query runs before it lets the event loop serve others. */
const SLICE_MS = 2;
/** Work units between two looks at the clock: a clock read costs more than a unit. */
const UNITS_PER_CHECK = 1024;

/**
 * What cancels a query: an `AbortSignal`, or any object whose `aborted` turns true (a server
 * makes a signal only for a query that outlives its first slice; see `runCooperatively`).
 */
export interface CancelSignal {
  readonly aborted: boolean;
}

/** Thrown when the query's abort signal fires (its client went away); nobody sees an answer. */
export class QueryCancelledError extends Error {
  constructor() {
    super('The query was cancelled.');
    this.name = 'QueryCancelledError';
  }
}

/**
 * One query's budgets: time (checked every `UNITS_PER_CHECK` units of work, so a query over its
 * deadline stops within a few milliseconds of it), rows written and, with the JSON writer,
 * bytes. The executor calls `tick` inside every loop that can be long.
 */
export class QueryBudget {
  readonly limits: QueryLimits;
  readonly #signal: CancelSignal | undefined;
  readonly #deadline: number;
  #sliceEnd: number;
  #units = 0;
  #rows = 0;

  /**
   * `startedAt`: when the query's clock started (`performance.now()`), if before now; `now`: the
   * clock as the caller just read it (a read costs ~70 ns on a virtual machine's clock).
   */
  constructor(
    limits: QueryLimits,
    signal?: CancelSignal,
    startedAt?: number,
    now = performance.now(),
  ) {
    this.limits = limits;
    this.#signal = signal;
    this.#deadline = (startedAt ?? now) + limits.timeoutMs;
    this.#sliceEnd = now + SLICE_MS;
  }

  /**
   * Counts `units` of work; throws when the query is over its time or cancelled. True when
   * its time slice is used up: a generator should `yield` then.
   */
  tick(units = 1): boolean {
    this.#units += units;
    if (this.#units < UNITS_PER_CHECK) return false;
    this.#units = 0;
    return this.#lookAtClock() >= this.#sliceEnd;
  }

  /** Starts a new time slice after the query was paused. */
  resumed(): void {
    this.#sliceEnd = this.#lookAtClock() + SLICE_MS;
  }

  /** Counts rows written into the answer; throws `too_many_rows` past the budget. */
  addRows(count: number): void {
    this.#rows += count;
    if (this.#rows > this.limits.maxRows) throw tooManyRows(this.limits.maxRows);
  }

  /** Refuses up front a page that alone would be over the rows budget. */
  expectRows(count: number): void {
    if (this.#rows + count > this.limits.maxRows) throw tooManyRows(this.limits.maxRows);
  }

  #lookAtClock(): number {
    if (this.#signal?.aborted) throw new QueryCancelledError();
    const now = performance.now();
    if (now > this.#deadline) {
      throw new EngineError(
        'query_timeout',
        `The query ran past its time budget of ${this.limits.timeoutMs} ms (query.timeout_ms) and was stopped. Narrow the filter (an indexed field with = or IN is fastest), lower LIMIT, nest fewer levels, or page with AFTER.`,
      );
    }
    return now;
  }
}

function tooManyRows(maxRows: number): EngineError {
  return new EngineError(
    'too_many_rows',
    `The answer would hold more than ${maxRows} rows, counted across every nesting level (query.max_rows). Lower LIMIT, give nested selections a LIMIT, nest fewer levels, or page with AFTER.`,
  );
}

/** Runs work to its end without pausing (tools and tests); the budget still applies. */
export function runToEnd<T>(work: Work<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/**
 * Paused queries take turns: each turn of the event loop runs the slices of those waiting, in
 * order, until `TURN_MS` have passed, then lets the loop serve I/O again. However many queries
 * run, a new request waits at most about one turn for its bytes to be read, not one slice of
 * every running query.
 */
const TURN_MS = 4;
/** Steps waiting for a turn, in order. */
let waitingSteps: (() => void)[] = [];
let turnScheduled = false;

function takeTurnLater(step: () => void): void {
  waitingSteps.push(step);
  if (!turnScheduled) {
    turnScheduled = true;
    setImmediate(runTurn);
  }
}

function runTurn(): void {
  const end = performance.now() + TURN_MS;
  // Only the steps waiting now: one that runs and pauses again waits for a later turn. The
  // turn's list is its own, so a step run (and the query it holds) is not kept once it ran.
  const turn = waitingSteps;
  waitingSteps = [];
  let next = 0;
  while (next < turn.length) {
    const step = turn[next] as () => void;
    next += 1;
    step();
    if (performance.now() >= end) break;
  }
  // Those the turn did not reach go first next time, before the ones queued meanwhile.
  if (next < turn.length) waitingSteps = turn.slice(next).concat(waitingSteps);
  if (waitingSteps.length === 0) turnScheduled = false;
  else setImmediate(runTurn);
}

/**
 * Runs work, letting the event loop serve other requests each time its slice is used up: the
 * paused queries take turns (`runTurn`), so long queries cost a new request about one turn of
 * latency each time it waits on I/O. Work done within its first slice (most queries) returns
 * `finish` of its result at once, or throws, with no promise and no turn of the event loop;
 * longer work returns a promise of it.
 */
export function runCooperatively<T, R>(
  work: Work<T>,
  budget: QueryBudget,
  finish: (result: T) => R,
): R | Promise<R> {
  const step = work.next();
  if (step.done) return finish(step.value);
  return resumeCooperatively(work, budget, finish);
}

function resumeCooperatively<T, R>(
  work: Work<T>,
  budget: QueryBudget,
  finish: (result: T) => R,
): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    const step = () => {
      try {
        budget.resumed();
        const next = work.next();
        if (next.done) resolve(finish(next.value));
        else takeTurnLater(step);
      } catch (error) {
        reject(error);
      }
    };
    takeTurnLater(step);
  });
}
