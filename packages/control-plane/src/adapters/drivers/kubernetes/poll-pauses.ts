/**
 * The pauses between polls of a Kubernetes object that takes a while to change (a rollout, a
 * pod's end, a Job's): short at first, for what is quick, then half again as long each time up
 * to `maxMs`, so a slow change costs the API server few requests.
 */
export class PollPauses {
  readonly #maxMs: number;
  #next: number;

  constructor(firstMs: number, maxMs: number) {
    this.#next = firstMs;
    this.#maxMs = maxMs;
  }

  /** The pause before the next poll, in milliseconds. */
  next(): number {
    const pause = this.#next;
    this.#next = Math.min(this.#maxMs, Math.round(pause * 1.5));
    return pause;
  }
}
