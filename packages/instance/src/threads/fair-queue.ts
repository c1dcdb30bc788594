/**
 * Work waiting for its turn, queued per key and served by deficit round robin over the time
 * each key's work takes: every key with work due gets a turn in each round, a turn is one item,
 * and a key whose items cost more than its `turnMs` per round waits out rounds until its
 * credit is paid back. One key's flood therefore delays another key's item by at most the one
 * item running when it arrives, and the flood itself gets every turn nobody else wants.
 *
 * An item may be due under several keys (a live query shared by subscribers of several keys):
 * it runs at the first of their turns, once, and its cost is split among them.
 *
 * Each key also has a budget of `windowMs` in a window (a snapshot swap, for live queries):
 * past it, its items wait until every key within its budget has run what it has due, and
 * until the next window (`newWindow`) unless nothing else is due: work is never left waiting
 * while the thread could do it (one app's many live queries all share its one key). An item due
 * under several keys counts as within budget while any of them is.
 */
export class FairQueue<Item> {
  readonly #turnMs: number;
  readonly #windowMs: number;
  /** Time each key spent in this window (keys that spent none are not listed). */
  readonly #spent = new Map<string, number>();
  /** Keys with items due, in the order of their next turn; each key's items first in, first out. */
  readonly #due = new Map<string, Set<Item>>();
  /** The keys each due item is queued under. */
  readonly #keysOf = new Map<Item, Set<string>>();
  /** Each key's credit of time (at most `turnMs`); a key not listed has a full turn. */
  readonly #credit = new Map<string, number>();

  constructor(turnMs: number, windowMs = Number.POSITIVE_INFINITY) {
    this.#turnMs = turnMs;
    this.#windowMs = windowMs;
  }

  /** Starts a new window: every key's budget is whole again. */
  newWindow(): void {
    this.#spent.clear();
  }

  /** Items due. */
  get size(): number {
    return this.#keysOf.size;
  }

  has(item: Item): boolean {
    return this.#keysOf.has(item);
  }

  /** Queues `item` under `keys`; an item already due keeps its place (it runs once). */
  add(item: Item, keys: Iterable<string>): void {
    let under = this.#keysOf.get(item);
    if (!under) {
      under = new Set();
      this.#keysOf.set(item, under);
    }
    for (const key of keys) {
      if (under.has(key)) continue;
      under.add(key);
      let items = this.#due.get(key);
      if (!items) {
        items = new Set();
        this.#due.set(key, items);
      }
      items.add(item);
    }
    if (under.size === 0) this.#keysOf.delete(item);
  }

  /** Takes `item` out of the queue (it ran, or nobody wants it any more). */
  remove(item: Item): void {
    const under = this.#keysOf.get(item);
    if (!under) return;
    this.#keysOf.delete(item);
    for (const key of under) {
      const items = this.#due.get(key);
      items?.delete(item);
      if (items?.size === 0) this.#due.delete(key);
    }
  }

  /**
   * The next item to run and the keys it is charged to, taken out of the queue; undefined when
   * nothing is due. Keys in debt are passed over, each pass giving them a turn's credit back.
   */
  next(): { readonly item: Item; readonly keys: readonly string[] } | undefined {
    // Keys over their window's budget are passed over while any key within its budget has an
    // item due; when none has, the budget is left aside and the turns alone decide.
    let passedOver = 0;
    let overBudgetRuns = false;
    for (;;) {
      const first = this.#due.entries().next();
      if (first.done) return undefined;
      if (passedOver >= this.#due.size) overBudgetRuns = true;
      const [key, items] = first.value;
      // The key's turn is over: it goes to the back of the round either way.
      this.#due.delete(key);
      this.#due.set(key, items);
      const item = items.values().next().value as Item;
      const keys = [...(this.#keysOf.get(item) ?? [key])];
      const overBudget = keys.every((under) => (this.#spent.get(under) ?? 0) >= this.#windowMs);
      if (overBudget && !overBudgetRuns) {
        passedOver += 1;
        continue;
      }
      passedOver = 0;
      const credit = this.#credit.get(key) ?? this.#turnMs;
      if (credit <= 0) {
        this.#credit.set(key, credit + this.#turnMs);
        continue;
      }
      this.remove(item);
      return { item, keys };
    }
  }

  /** Charges `ms` of work to `keys`, split evenly; no key banks more than one turn. */
  charge(keys: readonly string[], ms: number): void {
    if (keys.length === 0) return;
    const share = ms / keys.length;
    for (const key of keys) {
      if (this.#windowMs < Number.POSITIVE_INFINITY)
        this.#spent.set(key, (this.#spent.get(key) ?? 0) + share);
      const credit = Math.min(this.#turnMs, (this.#credit.get(key) ?? this.#turnMs) - share);
      if (credit >= this.#turnMs) this.#credit.delete(key);
      else this.#credit.set(key, credit);
    }
  }

  /** Forgets a key's debt (it has nothing left that could be queued). */
  forget(key: string): void {
    if (!this.#due.has(key)) this.#credit.delete(key);
  }
}
