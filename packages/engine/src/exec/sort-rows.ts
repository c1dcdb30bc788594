import type { Comparable } from '../storage/comparable.ts';
import { compareCodePoints } from './code-point-compare.ts';
import type { QueryBudget, Work } from './query-budget.ts';

/** Orders two sort-key values; NULLs sort last ascending and first descending (PostgreSQL). */
export function compareSortValues(
  a: Comparable | null,
  b: Comparable | null,
  descending: boolean,
): number {
  if (a === b) return 0;
  if (a === null) return descending ? -1 : 1;
  if (b === null) return descending ? 1 : -1;
  let order: number;
  if (typeof a === 'string' && typeof b === 'string') order = compareCodePoints(a, b);
  else if (typeRank(a) !== typeRank(b)) order = typeRank(a) - typeRank(b);
  else order = a < b ? -1 : a > b ? 1 : 0;
  return descending ? -order : order;
}

/**
 * Values of different types meet only in a sort on a JSON path: numbers, then text, then
 * booleans (docs/instance-api.md, JSON paths).
 */
function typeRank(value: Comparable): number {
  switch (typeof value) {
    case 'string':
      return 1;
    case 'boolean':
      return 2;
    default:
      return 0;
  }
}

/** Items sorted in one synchronous `Array.prototype.sort` call before the merge takes over. */
const RUN = 4096;

/**
 * Sorts `items` (a copy) by `compare`: runs of `RUN` items sorted at once, then merged pairwise,
 * ticking the budget as it goes, so a sort of a million rows pauses and can be stopped.
 */
export function* sortAll<T>(
  items: readonly T[],
  compare: (a: T, b: T) => number,
  budget: QueryBudget,
): Work<T[]> {
  let source: T[] = [];
  for (let start = 0; start < items.length; start += RUN) {
    const run = items.slice(start, start + RUN).sort(compare);
    for (let i = 0; i < run.length; i++) source.push(run[i] as T);
    if (budget.tick(run.length * 12)) yield;
  }
  let target: T[] = new Array(items.length);
  for (let width = RUN; width < source.length; width *= 2) {
    for (let left = 0; left < source.length; left += 2 * width) {
      const middle = Math.min(left + width, source.length);
      const end = Math.min(left + 2 * width, source.length);
      let i = left;
      let j = middle;
      for (let k = left; k < end; k++) {
        if (i < middle && (j >= end || compare(source[i] as T, source[j] as T) <= 0))
          target[k] = source[i++] as T;
        else target[k] = source[j++] as T;
        if (budget.tick()) yield;
      }
    }
    [source, target] = [target, source];
  }
  return source;
}

/**
 * The first `count` items of `items` in `compare` order, without sorting them all when
 * `count` is small: a bounded max-heap keeps the best `count` seen so far.
 */
export function* topK<T>(
  items: readonly T[],
  count: number,
  compare: (a: T, b: T) => number,
  budget: QueryBudget,
): Work<T[]> {
  if (count <= 0) return [];
  if (count * 4 >= items.length) return (yield* sortAll(items, compare, budget)).slice(0, count);
  const heap: T[] = [];
  const siftUp = (start: number) => {
    let i = start;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compare(heap[i] as T, heap[parent] as T) <= 0) break;
      [heap[i], heap[parent]] = [heap[parent] as T, heap[i] as T];
      i = parent;
    }
  };
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && compare(heap[left] as T, heap[largest] as T) > 0) largest = left;
      if (right < heap.length && compare(heap[right] as T, heap[largest] as T) > 0) largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest] as T, heap[i] as T];
      i = largest;
    }
  };
  for (let n = 0; n < items.length; n++) {
    const item = items[n] as T;
    if (heap.length < count) {
      heap.push(item);
      siftUp(heap.length - 1);
    } else if (compare(item, heap[0] as T) < 0) {
      heap[0] = item;
      siftDown();
    }
    if (budget.tick()) yield;
  }
  return yield* sortAll(heap, compare, budget);
}

/**
 * `topK` for the common single numeric sort key: each position's key becomes one score where
 * lower is better (NULLs last ascending, first descending), so most positions are rejected
 * against the heap's worst score without a comparator call. `tiebreak` orders equal scores.
 */
export function* topKByScore(
  scores: Float64Array,
  count: number,
  tiebreak: (a: number, b: number) => number,
  budget: QueryBudget,
): Work<number[]> {
  const n = scores.length;
  if (count <= 0 || n === 0) return [];
  const worse = (a: number, b: number) => {
    const x = scores[a] as number;
    const y = scores[b] as number;
    return x !== y ? (x > y ? 1 : -1) : tiebreak(a, b);
  };
  if (count * 4 >= n) {
    const positions = Array.from(scores.keys());
    return (yield* sortAll(positions, worse, budget)).slice(0, count);
  }
  // A max-heap of the best `count` positions so far: its root is the worst of them.
  const heap: number[] = [];
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let largest = i;
      if (left < heap.length && worse(heap[left] as number, heap[largest] as number) > 0)
        largest = left;
      if (right < heap.length && worse(heap[right] as number, heap[largest] as number) > 0)
        largest = right;
      if (largest === i) return;
      [heap[i], heap[largest]] = [heap[largest] as number, heap[i] as number];
      i = largest;
    }
  };
  for (let position = 0; position < n; position++) {
    if (budget.tick()) yield;
    if (heap.length < count) {
      heap.push(position);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (worse(heap[i] as number, heap[parent] as number) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent] as number, heap[i] as number];
        i = parent;
      }
      continue;
    }
    const score = scores[position] as number;
    const rootScore = scores[heap[0] as number] as number;
    if (score > rootScore || (score === rootScore && worse(position, heap[0] as number) >= 0))
      continue;
    heap[0] = position;
    siftDown();
  }
  return yield* sortAll(heap, worse, budget);
}
