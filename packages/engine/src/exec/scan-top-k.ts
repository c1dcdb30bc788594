import type { TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, type Chunk } from '../storage/table-data.ts';
import { type ZoneMap, zoneMap } from '../storage/zone-map.ts';
import { ALWAYS, codeTestOf, NEVER, type OffsetTest, type RowFilter } from './predicate.ts';
import type { QueryBudget, Work } from './query-budget.ts';

/** A fused scan's answer: the best rows, best first, and how many rows matched in all. */
export interface ScanTopK {
  readonly rows: number[];
  readonly matched: number;
}

/** Rows between two looks at the budget, as in the executor's scans. */
const BLOCK_ROWS = 4096;

/**
 * The first `count` rows passing `filter` in the order of one numeric column (NULLs last
 * ascending, first descending; `tiebreak` orders equal values), in one pass over the table:
 * filter, score and a bounded heap fused per chunk, values read straight from the typed
 * arrays, no list of matching rows. A chunk whose zone map (storage/zone-map.ts) shows that no
 * row of it can enter a full heap only has its matches counted.
 *
 * Null when a chunk of the column is not plain numbers (text, booleans, doubles with exact
 * source text) or holds an infinite value or NaN, which a score cannot tell from NULL: the
 * caller then takes the general path, which compares values as they are.
 */
export function* scanTopK(
  snapshot: TableSnapshot,
  filter: RowFilter | null,
  column: number,
  descending: boolean,
  count: number,
  tiebreak: (a: number, b: number) => number,
  budget: QueryBudget,
): Work<ScanTopK | null> {
  const sign = descending ? -1 : 1;
  const nullScore = descending ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  // A max-heap of the best rows so far, by (score, tiebreak): its root is the worst of them.
  const scores = new Float64Array(count);
  const rows = new Float64Array(count);
  let size = 0;
  let matched = 0;
  /** Whether (scoreA, rowA) sorts after (scoreB, rowB). */
  const after = (scoreA: number, rowA: number, scoreB: number, rowB: number) =>
    scoreA > scoreB || (scoreA === scoreB && tiebreak(rowA, rowB) > 0);
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < size && after(scores[left]!, rows[left]!, scores[worst]!, rows[worst]!))
        worst = left;
      if (right < size && after(scores[right]!, rows[right]!, scores[worst]!, rows[worst]!))
        worst = right;
      if (worst === i) return;
      swap(scores, i, worst);
      swap(rows, i, worst);
      i = worst;
    }
  };
  const offer = (score: number, rowId: number) => {
    if (size < count) {
      let i = size++;
      scores[i] = score;
      rows[i] = rowId;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!after(scores[i]!, rows[i]!, scores[parent]!, rows[parent]!)) break;
        swap(scores, i, parent);
        swap(rows, i, parent);
        i = parent;
      }
    } else if (score < scores[0]! || (score === scores[0]! && tiebreak(rowId, rows[0]!) < 0)) {
      scores[0] = score;
      rows[0] = rowId;
      siftDown();
    }
  };

  const chunks = snapshot.data.chunks;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c] as Chunk;
    let test: OffsetTest | undefined = filter?.forChunk(c);
    if (test === NEVER) continue;
    if (test === ALWAYS) test = undefined;
    const values = chunk.columns[column]!;
    // A DECIMAL stored as units sorts by its units, in the order of its values.
    if (values.kind !== 'int32' && values.kind !== 'float64' && values.kind !== 'decimal')
      return null;
    if (values.kind !== 'int32' && values.exact !== null) return null;
    const zone = zoneMap(values);
    // No zone means a NaN; an infinite bound, an infinite value (a chunk of NULLs has
    // min > max, which is fine).
    if (zone === null) return null;
    if (zone.min <= zone.max && (!Number.isFinite(zone.min) || !Number.isFinite(zone.max)))
      return null;
    const nulls = values.nulls;
    // The best score any row of the chunk can have; a full heap it cannot beat skips it.
    const best =
      nulls !== null ? Math.min(nullScore, bestScore(zone, sign)) : bestScore(zone, sign);
    if (size === count && best > scores[0]!) {
      matched += yield* countMatches(chunk, test, budget);
      continue;
    }
    const base = c << CHUNK_BITS;
    const deleted = chunk.deleted;
    const data = values.values;
    const codeTest = test === undefined ? undefined : codeTestOf(test);
    const codes = codeTest?.codes;
    const passes = codeTest?.matches;
    for (let from = 0; from < chunk.length; from += BLOCK_ROWS) {
      const to = Math.min(chunk.length, from + BLOCK_ROWS);
      for (let offset = from; offset < to; offset++) {
        if (deleted !== null && (deleted[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
        if (passes !== undefined) {
          if (passes[codes![offset]!] === 0) continue;
        } else if (test !== undefined && !test(offset)) continue;
        matched++;
        const score =
          nulls !== null && (nulls[offset >>> 3]! & (1 << (offset & 7))) !== 0
            ? nullScore
            : sign * data[offset]!;
        // Most rows lose to a full heap's root on the score alone.
        if (size === count && score > scores[0]!) continue;
        offer(score, base + offset);
      }
      if (budget.tick(to - from)) yield;
    }
  }
  const order = Array.from({ length: size }, (_, i) => i);
  order.sort((a, b) => (after(scores[a]!, rows[a]!, scores[b]!, rows[b]!) ? 1 : -1));
  if (budget.tick(size * 12)) yield;
  return { rows: order.map((i) => rows[i]!), matched };
}

/** The lowest score of a non-NULL value in the zone. */
function bestScore(zone: ZoneMap, sign: number): number {
  if (zone.min > zone.max) return Number.POSITIVE_INFINITY;
  return sign === 1 ? zone.min : -zone.max;
}

function swap(array: Float64Array, i: number, j: number): void {
  const t = array[i]!;
  array[i] = array[j]!;
  array[j] = t;
}

/** Live rows of `chunk` passing `test`; without a test, the chunk's live rows. */
function* countMatches(
  chunk: Chunk,
  test: OffsetTest | undefined,
  budget: QueryBudget,
): Work<number> {
  if (test === undefined) {
    if (budget.tick(chunk.length >>> 4)) yield;
    return chunk.length - chunk.deletedCount;
  }
  const deleted = chunk.deleted;
  const codeTest = codeTestOf(test);
  let matched = 0;
  for (let from = 0; from < chunk.length; from += BLOCK_ROWS) {
    const to = Math.min(chunk.length, from + BLOCK_ROWS);
    for (let offset = from; offset < to; offset++) {
      if (deleted !== null && (deleted[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
      if (codeTest !== undefined) matched += codeTest.matches[codeTest.codes[offset]!]!;
      else if (test(offset)) matched++;
    }
    if (budget.tick(to - from)) yield;
  }
  return matched;
}
