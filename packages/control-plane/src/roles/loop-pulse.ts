/**
 * When a role's loop last turned and last completed a pass, read by the process's probes
 * (`process-probes.ts`): readiness wants a recent completed pass, liveness only a recent turn,
 * so a loop that keeps failing (its store is down) is unready but not restarted.
 */
export class LoopPulse {
  readonly role: string;
  /** How often the loop turns when idle; the probes allow a few periods. */
  readonly periodMs: number;
  readonly #now: () => number;
  readonly #startedAt: number;
  #lastTurn: number;
  #lastPass: number | undefined;

  constructor(role: string, periodMs: number, now: () => number = Date.now) {
    this.role = role;
    this.periodMs = periodMs;
    this.#now = now;
    this.#startedAt = now();
    this.#lastTurn = this.#startedAt;
  }

  /** A pass of the loop did its work (or long work showed progress, like a renewed lease). */
  passed(): void {
    this.#lastTurn = this.#now();
    this.#lastPass = this.#lastTurn;
  }

  /** A pass of the loop failed; the loop still turns. */
  failed(): void {
    this.#lastTurn = this.#now();
  }

  /** Milliseconds since the last completed pass; undefined before the first. */
  sincePassMs(): number | undefined {
    return this.#lastPass === undefined ? undefined : this.#now() - this.#lastPass;
  }

  /** Milliseconds since the loop last turned (or started). */
  sinceTurnMs(): number {
    return this.#now() - this.#lastTurn;
  }
}
