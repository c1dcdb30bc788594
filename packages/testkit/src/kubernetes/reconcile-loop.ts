import type { ObjectStore } from './object-store.ts';

/** Deadlines, probes' effects and TTLs are looked at this often besides on every write. */
const TICK_MS = 250;

/**
 * What drives each controller of the fake's `runPods` mode: `reconcileAll` runs after any write
 * to an object of `kinds` (once per burst of writes, after the write and its watchers are done)
 * and on a steady tick. `stop` ends both.
 */
export class ReconcileLoop {
  readonly #timer: NodeJS.Timeout;
  readonly #stopWatching: () => void;
  #queued = false;

  constructor(store: ObjectStore, kinds: readonly string[], reconcileAll: () => void) {
    const queue = () => {
      if (this.#queued) return;
      this.#queued = true;
      setImmediate(() => {
        this.#queued = false;
        reconcileAll();
      });
    };
    this.#stopWatching = store.onChange(({ object }) => {
      if (kinds.includes(object.kind)) queue();
    });
    this.#timer = setInterval(queue, TICK_MS);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#stopWatching();
  }
}
