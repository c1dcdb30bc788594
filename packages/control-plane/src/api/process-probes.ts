import { pingStore, type StoreDb } from '../adapters/store/open-store.ts';
import type { LoopPulse } from '../roles/loop-pulse.ts';

/** Where every control-plane process answers its probes (the API's port or the probe listener). */
export const PROBE_PATHS = Object.freeze({ live: '/live', ready: '/ready' });

/** How long probes give a loop, at least: a reconcile pass over many databases takes a while. */
export const READY_WITHIN_FLOOR_MS = 60_000;
export const LIVE_WITHIN_FLOOR_MS = 300_000;
/** A store slower than this to answer `SELECT 1` counts as not answering. */
export const STORE_CHECK_TIMEOUT_MS = 2000;

export interface ProbeWindows {
  /** A loop is ready when its last completed pass is at most this old. */
  readonly readyWithinMs: (pulse: LoopPulse) => number;
  /** A loop is live when it last turned at most this long ago. */
  readonly liveWithinMs: (pulse: LoopPulse) => number;
  readonly storeTimeoutMs: number;
}

export const DEFAULT_PROBE_WINDOWS: ProbeWindows = Object.freeze({
  readyWithinMs: (pulse: LoopPulse) => Math.max(READY_WITHIN_FLOOR_MS, 3 * pulse.periodMs),
  liveWithinMs: (pulse: LoopPulse) => Math.max(LIVE_WITHIN_FLOOR_MS, 10 * pulse.periodMs),
  storeTimeoutMs: STORE_CHECK_TIMEOUT_MS,
});

/** A probe's answer in the control plane's envelope: 200, or 503 `not_ready` saying why. */
export type ProbeAnswer =
  | { readonly status: 200; readonly body: { readonly status: 'ok' } }
  | {
      readonly status: 503;
      readonly body: { readonly error: 'not_ready'; readonly message: string };
    };

const OK: ProbeAnswer = { status: 200, body: { status: 'ok' } };
const notReady = (message: string): ProbeAnswer => ({
  status: 503,
  body: { error: 'not_ready', message },
});
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * The `/live` and `/ready` answers of one control-plane process, over the loops of the roles it
 * runs (the api role has none: it is ready when its store answers). Messages name the role and
 * the window, never the store's address or an error's text.
 */
export class ProcessProbes {
  readonly #db: StoreDb;
  readonly #pulses: LoopPulse[] = [];
  readonly #windows: ProbeWindows;

  constructor(db: StoreDb, windows: ProbeWindows = DEFAULT_PROBE_WINDOWS) {
    this.#db = db;
    this.#windows = windows;
  }

  /** Watches one more role's loop. */
  watch(pulse: LoopPulse): void {
    this.#pulses.push(pulse);
  }

  /** Live while every loop keeps turning: a stuck loop is worth a restart, a failing one is not. */
  live(): ProbeAnswer {
    for (const pulse of this.#pulses) {
      const within = this.#windows.liveWithinMs(pulse);
      if (pulse.sinceTurnMs() > within)
        return notReady(`The ${pulse.role} loop has not turned in ${seconds(within)}.`);
    }
    return OK;
  }

  /** Ready when the store answers and every loop completed a pass recently. */
  async ready(): Promise<ProbeAnswer> {
    if (!(await this.#storeAnswers())) return notReady('The store did not answer.');
    for (const pulse of this.#pulses) {
      const since = pulse.sincePassMs();
      if (since === undefined)
        return notReady(`The ${pulse.role} loop has not completed a pass yet.`);
      const within = this.#windows.readyWithinMs(pulse);
      if (since > within)
        return notReady(`The ${pulse.role} loop has not completed a pass in ${seconds(within)}.`);
    }
    return OK;
  }

  async #storeAnswers(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.#windows.storeTimeoutMs);
    });
    const check = pingStore(this.#db).then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([check, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
