import { Buffer } from 'node:buffer';
import { EngineError } from '../errors.ts';
import type { CompiledRelation, CompiledTable } from '../schema/compiled-schema.ts';
import type { ColumnChunk } from '../storage/column-chunk.ts';
import { readComparable } from '../storage/column-reader.ts';
import type { Comparable } from '../storage/comparable.ts';
import { type Generation, indexName, type TableSnapshot } from '../storage/generation.ts';
import type { Key } from '../storage/key-index.ts';
import { rowKey } from '../storage/row-key.ts';
import { CHUNK_BITS, CHUNK_ROWS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import {
  Aggregator,
  aggregateJson,
  aggregateRows,
  aggregateValue,
  emptyGroup,
  type Group,
} from './aggregate-rows.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { parseDecimal } from './exact-decimal.ts';
import { jsonSortValueAt, jsonTextAt } from './json-path.ts';
import { type JsonWriter, type WordBytes, wordBytes } from './json-writer.ts';
import type {
  PlanAggregate,
  PlanFilter,
  PlanHaving,
  PlanOutput,
  PlanSort,
  PlanSubQuery,
  QueryPlan,
} from './plan.ts';
import { ALWAYS, NEVER, type OffsetTest, RowFilter } from './predicate.ts';
import type { QueryBudget, Work } from './query-budget.ts';
import { relatedRows } from './relations.ts';
import { scanTopK } from './scan-top-k.ts';
import { compareSortValues, topK, topKByScore } from './sort-rows.ts';
import { TOUCHED_ROWS, touchRows } from './touch-rows.ts';
import { type ValueWriter, valueWriter, writeValue } from './value-writer.ts';

/** Compares two rows of a page by one sort key, by their positions in the page. */
interface SortKeys {
  compare(a: number, b: number): number;
}

/** An answer's pagination; its rows went to the writer. */
export interface QueryResult {
  readonly count: number;
  readonly totalMatched: number;
  readonly hasMore: boolean;
  /** The effective limit; null when unbounded. */
  readonly limit: number | null;
  readonly nextCursor?: string;
}

type RelationOutput = Extract<PlanOutput, { kind: 'relation' }>;

const KEY_PREFIXES = new Map<string, string>();

/** `"key":`, built once per distinct key. */
function keyPrefix(key: string): string {
  let prefix = KEY_PREFIXES.get(key);
  if (prefix === undefined) {
    prefix = `${JSON.stringify(key)}:`;
    if (KEY_PREFIXES.size < 10_000) KEY_PREFIXES.set(key, prefix);
  }
  return prefix;
}

const PREFIX_BYTES = new Map<string, WordBytes>();

/**
 * `{"key":` or `,"key":` as UTF-8, made once per distinct key and shared by every row layout
 * that writes it: a layout per cached plan holding its own buffers would hold one per output,
 * thousands for `...` on a wide table, beyond what the plan cache counts.
 */
function prefixBytes(opening: '{' | ',', key: string): WordBytes {
  const text = opening + keyPrefix(key);
  let bytes = PREFIX_BYTES.get(text);
  if (bytes === undefined) {
    bytes = wordBytes(Buffer.from(text, 'utf8'));
    if (PREFIX_BYTES.size < 20_000) PREFIX_BYTES.set(text, bytes);
  }
  return bytes;
}

function valueAt(snapshot: TableSnapshot, rowId: number, column: number): Comparable | null {
  const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
  return readComparable(chunk.columns[column] as ColumnChunk, rowId & OFFSET_MASK);
}

/** How a selection's rows are written, worked out once per plan. */
interface RowLayout {
  /** Per output, the UTF-8 before its value: `{"key":` for the first, `,"key":` after. */
  readonly prefixBytes: readonly WordBytes[];
  /** Per output, the writer of its column's values (`writeValue` for other outputs). */
  readonly writers: readonly ValueWriter[];
  /** True when every output is a column. */
  readonly flat: boolean;
}

/**
 * By the selection's outputs: a plan bound from a cached template is a new object per query,
 * but keeps its template's outputs array (plan-template.ts), so the layout is made once.
 */
const ROW_LAYOUTS = new WeakMap<readonly PlanOutput[], RowLayout>();

function rowLayout(sub: PlanSubQuery): RowLayout {
  const outputs = sub.outputs;
  let layout = ROW_LAYOUTS.get(outputs);
  if (layout === undefined) {
    layout = {
      prefixBytes: outputs.map((output, i) => prefixBytes(i === 0 ? '{' : ',', output.key)),
      writers: outputs.map((output) =>
        output.kind === 'column' ? valueWriter(output.column) : writeValue,
      ),
      flat: outputs.every((output) => output.kind === 'column'),
    };
    ROW_LAYOUTS.set(outputs, layout);
  }
  return layout;
}

/** Rows scanned between two looks at the query's budget and time slice. */
const SCAN_BLOCK_ROWS = 4096;

/** GROUP BY groups one query may form, as a multiple of its rows budget: each costs memory. */
const GROUPS_PER_ROW_BUDGET = 2;
/**
 * Distinct values COUNT(DISTINCT) may keep, over all groups, as a multiple of the rows budget:
 * a value costs a few dozen bytes, a group hundreds, and a column's distinct values are often
 * many more than its groups.
 */
const DISTINCT_PER_ROW_BUDGET = 10;

/**
 * Runs one validated plan against one generation and writes its rows as JSON text directly,
 * without building row objects. Every loop that can be long ticks the query's budget and
 * yields when its time slice is used up (see `Work`), so the caller decides whether other
 * requests run in between.
 */
export class Executor {
  readonly #generation: Generation;
  readonly #budget: QueryBudget;
  readonly #out: JsonWriter;
  /**
   * The key sets of the query's relation filters, each computed once (a semi-join); made on
   * first use, as is `#rowFilters`: a lookup answered by an index needs neither.
   */
  #semiJoins: Map<PlanFilter, ReadonlySet<Key>> | null = null;
  /** Compiled filters, reused for every parent row of a nested selection. */
  #rowFilters: Map<PlanFilter, RowFilter> | null = null;

  constructor(generation: Generation, budget: QueryBudget, out: JsonWriter) {
    this.#generation = generation;
    this.#budget = budget;
    this.#out = out;
  }

  /** Runs `plan`, writing its rows as one JSON array. */
  *run(plan: QueryPlan): Work<QueryResult> {
    const snapshot = this.#generation.table(plan.table.name);
    if (plan.aggregates.length > 0) {
      const groups = yield* this.#aggregateAll(snapshot, plan);
      return yield* this.#grouped(snapshot, plan, groups);
    }
    const looked = this.#lookedUp(snapshot, plan);
    if (looked !== null)
      return yield* this.#pageAnswer(snapshot, plan, looked.page, looked.matched);
    const scanned = yield* this.#scanPage(snapshot, plan);
    if (scanned !== null) return scanned;
    const matched = yield* this.#matchingRows(snapshot, plan.filter, null);
    if (plan.after !== null) return yield* this.#afterPage(snapshot, plan, matched, plan.after);
    const page = yield* this.#page(snapshot, plan, matched);
    return yield* this.#pageAnswer(snapshot, plan, page, matched.length);
  }

  /**
   * The page of a plan whose filter an index answers whole (= or IN on an indexed column) and
   * that neither sorts, groups nor pages with AFTER: a PK lookup, found without the general
   * path's passes (what `#matchingRows` and `#page` would give). Null for any other plan, or
   * more rows than a scan block (the general path then ticks the budget over them).
   */
  #lookedUp(snapshot: TableSnapshot, plan: QueryPlan): { page: number[]; matched: number } | null {
    const filter = plan.filter;
    if (filter === null || !answersWhole(filter)) return null;
    if (plan.orderBy.length > 0 || plan.after !== null) return null;
    const rows = indexCandidates(snapshot, filter);
    if (rows === null || rows.length > SCAN_BLOCK_ROWS) return null;
    const end = plan.limit === null ? rows.length : Math.min(rows.length, plan.offset + plan.limit);
    this.#budget.expectRows(Math.max(0, end - plan.offset));
    return { page: rows.slice(plan.offset, end), matched: rows.length };
  }

  /**
   * The answer of a lookup of a few rows with columns only (a `#lookedUp` page of at most
   * `TOUCHED_ROWS` rows, `layout.flat`), written at once by plain calls: the PK lookup, most
   * of an instance's queries, resumes no generator (`run` makes one per level it goes through,
   * each resumed through V8's generator trampolines). Null for any other plan: `run` answers it.
   */
  lookup(plan: QueryPlan): QueryResult | null {
    if (plan.aggregates.length > 0) return null;
    const layout = rowLayout(plan);
    if (!layout.flat) return null;
    const snapshot = this.#generation.table(plan.table.name);
    const looked = this.#lookedUp(snapshot, plan);
    if (looked === null || looked.page.length > TOUCHED_ROWS) return null;
    const { page, matched } = looked;
    const out = this.#out;
    const budget = this.#budget;
    if (page.length > 1) touchRows(snapshot, plan, page);
    out.byte(0x5b);
    for (let i = 0; i < page.length; i++) {
      if (i > 0) out.byte(0x2c);
      budget.addRows(1);
      this.#flatRowJson(snapshot, plan, layout, page[i] as number);
      // Counted as `#rowsJson` counts them; a few rows end well within the time slice.
      budget.tick(plan.outputs.length);
    }
    out.byte(0x5d);
    return pageResult(plan, page.length, matched);
  }

  /** Writes the page's rows; the result says what it is a page of (`totalMatched` rows). */
  *#pageAnswer(
    snapshot: TableSnapshot,
    plan: QueryPlan,
    page: readonly number[],
    totalMatched: number,
  ): Work<QueryResult> {
    yield* this.#rowsJson(snapshot, plan, page);
    return pageResult(plan, page.length, totalMatched);
  }

  /**
   * A page ordered by one numeric column of the table, found by one fused scan (filter, score
   * and top-K per chunk; exec/scan-top-k.ts) when no index narrows the rows. Null when the
   * plan is of another shape, or the column's values need the general path.
   */
  *#scanPage(snapshot: TableSnapshot, plan: QueryPlan): Work<QueryResult | null> {
    const only = plan.orderBy.length === 1 ? (plan.orderBy[0] as PlanSort) : undefined;
    if (only === undefined || only.source.kind !== 'column' || only.source.via.length > 0)
      return null;
    if (plan.limit === null || plan.after !== null) return null;
    const end = plan.offset + plan.limit;
    if (end <= 0 || end > CHUNK_ROWS) return null;
    if (plan.filter !== null && indexCandidates(snapshot, plan.filter) !== null) return null;
    const filterRows = plan.filter ? yield* this.#rowFilter(snapshot, plan.filter) : null;
    const found = yield* scanTopK(
      snapshot,
      filterRows,
      only.source.column.index,
      only.descending,
      end,
      tiebreaker(snapshot),
      this.#budget,
    );
    if (found === null) return null;
    this.#budget.expectRows(Math.max(0, Math.min(found.matched, end) - plan.offset));
    return yield* this.#pageAnswer(snapshot, plan, found.rows.slice(plan.offset), found.matched);
  }

  #semiJoinKeys(): Map<PlanFilter, ReadonlySet<Key>> {
    if (this.#semiJoins === null) this.#semiJoins = new Map();
    return this.#semiJoins;
  }

  *#rowFilter(snapshot: TableSnapshot, filter: PlanFilter): Work<RowFilter> {
    if (this.#rowFilters === null) this.#rowFilters = new Map();
    let rowFilter = this.#rowFilters.get(filter);
    if (rowFilter === undefined) {
      yield* this.#prepareSemiJoins(filter);
      rowFilter = new RowFilter(snapshot, filter, this.#semiJoinKeys());
      this.#rowFilters.set(filter, rowFilter);
    }
    return rowFilter;
  }

  /**
   * Computes, innermost first, the key set of every relation filter in `filter`: the related
   * table's rows that pass the inner filter, found once (by index or scan), instead of
   * following the relation from every candidate row, which multiplies along a chain.
   */
  *#prepareSemiJoins(filter: PlanFilter): Work<void> {
    if (filter.kind === 'and' || filter.kind === 'or') {
      for (const operand of filter.operands) yield* this.#prepareSemiJoins(operand);
      return;
    }
    const semiJoins = this.#semiJoinKeys();
    if (filter.kind !== 'related' || semiJoins.has(filter)) return;
    const target = this.#generation.table(filter.target.name);
    const keys = new Set<Key>();
    const joinColumns = filter.relation.targetColumns;
    yield* this.#eachMatchingRow(target, filter.filter, null, (rowId) => {
      const chunk = target.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
      const key = rowKey(chunk.columns, joinColumns, rowId & OFFSET_MASK);
      if (key !== null) keys.add(key);
    });
    semiJoins.set(filter, keys);
  }

  /** Row ids matching `filter`, from `candidates` or, without them, from an index or a scan. */
  *#matchingRows(
    snapshot: TableSnapshot,
    filter: PlanFilter | null,
    candidates: readonly number[] | null,
  ): Work<readonly number[]> {
    // Read-only from here on: candidates (an index's own list) are returned as they are.
    if (filter === null && candidates !== null) return candidates;
    const rows: number[] = [];
    yield* this.#eachMatchingRow(snapshot, filter, candidates, (rowId) => rows.push(rowId));
    return rows;
  }

  /**
   * Calls `visit` with each row id matching `filter` in row order, taken from `candidates` or,
   * without them, from an index or a chunk-by-chunk scan.
   */
  *#eachMatchingRow(
    snapshot: TableSnapshot,
    filter: PlanFilter | null,
    candidates: readonly number[] | null,
    visit: (rowId: number) => void,
  ): Work<void> {
    const indexed =
      candidates === null && filter !== null ? indexCandidates(snapshot, filter) : null;
    const from = candidates ?? indexed;
    // An index that answers the whole filter (= or IN on its column) leaves nothing to test.
    const filterRows =
      filter === null || (indexed !== null && answersWhole(filter))
        ? null
        : yield* this.#rowFilter(snapshot, filter);
    if (from) {
      for (let i = 0; i < from.length; i++) {
        const rowId = from[i] as number;
        if (!filterRows || filterRows.matches(rowId)) visit(rowId);
        if (this.#budget.tick()) yield;
      }
      return;
    }
    const chunks = snapshot.data.chunks;
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c] as Chunk;
      const base = c << CHUNK_BITS;
      const deleted = chunk.deleted;
      let test: OffsetTest | undefined = filterRows?.forChunk(c);
      if (test === NEVER) continue;
      if (test === ALWAYS) test = undefined;
      // A chunk is scanned in blocks, so a slow filter still pauses every few milliseconds.
      for (let from = 0; from < chunk.length; from += SCAN_BLOCK_ROWS) {
        const to = Math.min(chunk.length, from + SCAN_BLOCK_ROWS);
        for (let offset = from; offset < to; offset++) {
          // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
          if (deleted !== null && ((deleted[offset >>> 3] as number) & (1 << (offset & 7))) !== 0)
            continue;
          if (test === undefined || test(offset)) visit(base + offset);
        }
        if (this.#budget.tick(to - from)) yield;
      }
    }
  }

  /** Groups the rows matching the plan's filter, scanning chunk by chunk when no index helps. */
  *#aggregateAll(snapshot: TableSnapshot, sub: PlanSubQuery): Work<Group[]> {
    const maxGroups = this.#maxGroups();
    const aggregator = new Aggregator(snapshot, sub, this.#maxDistinct());
    const groups = aggregator.groups();
    const filterRows = sub.filter ? yield* this.#rowFilter(snapshot, sub.filter) : null;
    const candidates = sub.filter ? indexCandidates(snapshot, sub.filter) : null;
    if (candidates) {
      for (let i = 0; i < candidates.length; i++) {
        const rowId = candidates[i] as number;
        if (!filterRows || filterRows.matches(rowId)) aggregator.addRow(rowId);
        if (this.#budget.tick()) yield;
      }
    } else {
      for (let c = 0; c < snapshot.data.chunks.length; c++) {
        aggregator.addChunk(c, filterRows?.forChunk(c));
        if (groups.length > maxGroups) throw tooManyGroups(maxGroups);
        if (this.#budget.tick((snapshot.data.chunks[c] as Chunk).length)) yield;
      }
    }
    if (groups.length > maxGroups) throw tooManyGroups(maxGroups);
    return groups;
  }

  /** GROUP BY groups one aggregation may form. */
  #maxGroups(): number {
    return GROUPS_PER_ROW_BUDGET * this.#budget.limits.maxRows;
  }

  /** COUNT(DISTINCT) values one aggregation may keep. */
  #maxDistinct(): number {
    return DISTINCT_PER_ROW_BUDGET * this.#budget.limits.maxRows;
  }

  /** Sorts (when asked) and cuts the OFFSET/LIMIT window out of `rows`. */
  *#page(snapshot: TableSnapshot, sub: PlanSubQuery, rows: readonly number[]): Work<number[]> {
    const end = sub.limit === null ? rows.length : Math.min(rows.length, sub.offset + sub.limit);
    this.#budget.expectRows(Math.max(0, end - sub.offset));
    if (sub.orderBy.length === 0) return rows.slice(sub.offset, end);
    // Sort keys are read once into arrays; the sort then compares positions in them.
    const tiebreak = tiebreaker(snapshot);
    const byPosition = (a: number, b: number) => tiebreak(rows[a] as number, rows[b] as number);
    let best: number[];
    const only = sub.orderBy.length === 1 ? (sub.orderBy[0] as PlanSort) : undefined;
    const scores = only ? yield* this.#sortScores(snapshot, rows, only) : null;
    if (scores) best = yield* topKByScore(scores, end, byPosition, this.#budget);
    else {
      const keys: SortKeys[] = [];
      for (const sort of sub.orderBy) keys.push(yield* this.#sortKeys(snapshot, rows, sort));
      const compare = (a: number, b: number): number => {
        for (let k = 0; k < keys.length; k++) {
          const order = (keys[k] as SortKeys).compare(a, b);
          if (order !== 0) return order;
        }
        return byPosition(a, b);
      };
      best = yield* topK(Array.from(rows.keys()), end, compare, this.#budget);
    }
    return best.slice(sub.offset).map((position) => rows[position] as number);
  }

  /**
   * For a single numeric sort key, one score per row where lower sorts first: the value
   * ascending, its negation descending, NULLs at +Infinity ascending and -Infinity descending.
   * Null when the key is not numeric or a value is infinite (a score could not tell it from NULL).
   */
  *#sortScores(
    snapshot: TableSnapshot,
    rows: readonly number[],
    sort: PlanSort,
  ): Work<Float64Array | null> {
    const scores = new Float64Array(rows.length);
    const sign = sort.descending ? -1 : 1;
    for (let i = 0; i < rows.length; i++) {
      const value = this.#sortValue(snapshot, rows[i] as number, sort);
      if (value === null)
        scores[i] = sort.descending ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
      else if (typeof value === 'number' && Number.isFinite(value)) scores[i] = sign * value;
      else return null;
      if (this.#budget.tick()) yield;
    }
    return scores;
  }

  /** One sort key of every row, numbers in a typed array when the key is numeric. */
  *#sortKeys(snapshot: TableSnapshot, rows: readonly number[], sort: PlanSort): Work<SortKeys> {
    const values: (Comparable | null)[] = new Array(rows.length);
    let numeric = true;
    for (let i = 0; i < rows.length; i++) {
      const value = this.#sortValue(snapshot, rows[i] as number, sort);
      values[i] = value;
      if (value !== null && typeof value !== 'number') numeric = false;
      if (this.#budget.tick()) yield;
    }
    const descending = sort.descending;
    if (numeric) {
      const numbers = new Float64Array(values.length);
      const nulls = new Uint8Array(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i] ?? null;
        if (value === null) nulls[i] = 1;
        else numbers[i] = value as number;
      }
      return {
        compare(a, b) {
          const nullA = nulls[a] === 1;
          const nullB = nulls[b] === 1;
          if (nullA || nullB) return nullA === nullB ? 0 : (nullA ? 1 : -1) * (descending ? -1 : 1);
          const x = numbers[a] as number;
          const y = numbers[b] as number;
          const order = x < y ? -1 : x > y ? 1 : 0;
          return descending ? -order : order;
        },
      };
    }
    return {
      compare: (a, b) => compareSortValues(values[a] ?? null, values[b] ?? null, descending),
    };
  }

  #sortValue(snapshot: TableSnapshot, rowId: number, sort: PlanSort): Comparable | null {
    if (sort.source.kind !== 'column') return null;
    let table = snapshot;
    let row = rowId;
    for (const relation of sort.source.via) {
      const next = relatedRows(this.#generation, table, relation, row)[0];
      if (next === undefined) return null;
      table = this.#generation.table(relation.target);
      row = next;
    }
    const value = valueAt(table, row, sort.source.column.index);
    const json = sort.source.json;
    if (json === undefined) return value;
    return value === null ? null : jsonSortValueAt(value as string, json);
  }

  *#afterPage(
    snapshot: TableSnapshot,
    plan: QueryPlan,
    matched: readonly number[],
    cursor: string,
  ): Work<QueryResult> {
    const keyColumn = plan.table.columns[plan.table.primaryKey[0] as number];
    const keyIndex = keyColumn?.index ?? 0;
    const kind = keyColumn?.type === 'string' ? 'string' : 'number';
    const keyOf = (rowId: number) => valueAt(snapshot, rowId, keyIndex) as number | bigint | string;
    let rows = matched;
    if (cursor !== '') {
      const last = decodeCursor(cursor, kind);
      const after: number[] = [];
      for (let i = 0; i < matched.length; i++) {
        const rowId = matched[i] as number;
        if (compareSortValues(keyOf(rowId), last, false) > 0) after.push(rowId);
        if (this.#budget.tick()) yield;
      }
      rows = after;
    }
    const end = plan.limit === null ? rows.length : Math.min(rows.length, plan.offset + plan.limit);
    this.#budget.expectRows(Math.max(0, end - plan.offset));
    const byKey = (a: number, b: number) => compareSortValues(keyOf(a), keyOf(b), false);
    const page = (yield* topK(rows, end, byKey, this.#budget)).slice(plan.offset);
    const more = end < rows.length && page.length > 0;
    const lastRow = page[page.length - 1];
    yield* this.#rowsJson(snapshot, plan, page);
    return {
      count: page.length,
      totalMatched: matched.length,
      hasMore: more,
      limit: plan.limit,
      ...(more && lastRow !== undefined ? { nextCursor: encodeCursor(keyOf(lastRow)) } : {}),
    };
  }

  /** Sorts and pages groups, then writes them as a JSON array. */
  *#grouped(snapshot: TableSnapshot, sub: PlanSubQuery, grouped: Group[]): Work<QueryResult> {
    let groups = grouped;
    // Without GROUP BY keys an aggregate query has exactly one result row, even over no rows.
    if (groups.length === 0 && sub.groupBy.length === 0) {
      groups = [emptyGroup(sub)];
    }
    if (sub.having !== null) groups = yield* this.#havingGroups(snapshot, sub, groups);
    const total = groups.length;
    const end = sub.limit === null ? total : Math.min(total, sub.offset + sub.limit);
    this.#budget.expectRows(Math.max(0, end - sub.offset));
    let page: Group[];
    if (sub.orderBy.length === 0) page = groups.slice(sub.offset, end);
    else {
      const keys: (Comparable | null)[][] = new Array(total);
      for (let g = 0; g < total; g++) {
        const group = groups[g] as Group;
        keys[g] = sub.orderBy.map((sort) => this.#groupSortValue(snapshot, sub, group, sort));
        if (this.#budget.tick(sub.orderBy.length)) yield;
      }
      const compare = (a: number, b: number) => {
        const keysA = keys[a] as (Comparable | null)[];
        const keysB = keys[b] as (Comparable | null)[];
        for (let i = 0; i < sub.orderBy.length; i++) {
          const order = compareSortValues(
            keysA[i] ?? null,
            keysB[i] ?? null,
            (sub.orderBy[i] as PlanSort).descending,
          );
          if (order !== 0) return order;
        }
        return (groups[a] as Group).firstRow - (groups[b] as Group).firstRow;
      };
      const best = yield* topK(Array.from(groups.keys()), end, compare, this.#budget);
      page = best.slice(sub.offset).map((position) => groups[position] as Group);
    }
    const out = this.#out;
    out.write('[');
    for (let i = 0; i < page.length; i++) {
      if (i > 0) out.write(',');
      this.#budget.addRows(1);
      this.#groupJson(snapshot, sub, page[i] as Group);
      if (this.#budget.tick(sub.outputs.length)) yield;
    }
    out.write(']');
    return {
      count: page.length,
      totalMatched: total,
      hasMore: sub.offset + page.length < total,
      limit: sub.limit,
    };
  }

  /** The groups that meet the plan's HAVING, in their order. */
  *#havingGroups(snapshot: TableSnapshot, sub: PlanSubQuery, groups: Group[]): Work<Group[]> {
    const having = sub.having as PlanHaving;
    const kept: Group[] = [];
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g] as Group;
      if (this.#groupMeets(snapshot, sub, having, group)) kept.push(group);
      if (this.#budget.tick()) yield;
    }
    return kept;
  }

  #groupMeets(
    snapshot: TableSnapshot,
    sub: PlanSubQuery,
    having: PlanHaving,
    group: Group,
  ): boolean {
    switch (having.kind) {
      case 'and':
        return having.operands.every((operand) => this.#groupMeets(snapshot, sub, operand, group));
      case 'or':
        return having.operands.some((operand) => this.#groupMeets(snapshot, sub, operand, group));
      case 'number': {
        const a = having.aggregate;
        const text = aggregateJson(sub.aggregates[a] as PlanAggregate, a, group);
        return having.test(text === 'null' ? null : parseDecimal(text));
      }
      case 'row': {
        const row =
          having.aggregate < 0 ? group.firstRow : (group.extremeRows[having.aggregate] as number);
        // No row: a MIN or MAX of no value is NULL, which only IS NULL matches.
        if (row < 0) return having.filter.kind === 'isNull' && !having.filter.negated;
        return this.#leafFilter(snapshot, having.filter).matches(row);
      }
    }
  }

  /** A filter of one leaf without relations, made once per query. */
  #leafFilter(snapshot: TableSnapshot, leaf: PlanFilter): RowFilter {
    if (this.#rowFilters === null) this.#rowFilters = new Map();
    let rowFilter = this.#rowFilters.get(leaf);
    if (rowFilter === undefined) {
      rowFilter = new RowFilter(snapshot, leaf, this.#semiJoinKeys());
      this.#rowFilters.set(leaf, rowFilter);
    }
    return rowFilter;
  }

  #groupSortValue(
    snapshot: TableSnapshot,
    sub: PlanSubQuery,
    group: Group,
    sort: PlanSort,
  ): Comparable | null {
    const source = sort.source;
    if (source.kind === 'column')
      return group.firstRow < 0 ? null : valueAt(snapshot, group.firstRow, source.column.index);
    const a = sub.aggregates.findIndex((aggregate) => aggregate.key === source.key);
    return a < 0 ? null : aggregateValue(sub.aggregates[a]!, a, group);
  }

  #groupJson(snapshot: TableSnapshot, sub: PlanSubQuery, group: Group): void {
    const out = this.#out;
    out.write('{');
    let first = true;
    for (const output of sub.outputs) {
      if (!first) out.write(',');
      first = false;
      out.write(keyPrefix(output.key));
      if (output.kind === 'column') {
        if (group.firstRow < 0) out.write('null');
        else {
          const chunk = snapshot.data.chunks[group.firstRow >>> CHUNK_BITS] as Chunk;
          writeValue(
            out,
            output.column,
            chunk.columns[output.column.index] as ColumnChunk,
            group.firstRow & OFFSET_MASK,
          );
        }
      } else if (output.kind === 'aggregate') {
        const a = sub.aggregates.indexOf(output.aggregate);
        const { fn, column } = output.aggregate;
        if ((fn === 'MIN' || fn === 'MAX') && column !== null) {
          // Written from the row holding it, as that column's values are written.
          const row = group.extremeRows[a] as number;
          if (row < 0) out.write('null');
          else {
            const chunk = snapshot.data.chunks[row >>> CHUNK_BITS] as Chunk;
            writeValue(out, column, chunk.columns[column.index] as ColumnChunk, row & OFFSET_MASK);
          }
        } else out.write(aggregateJson(output.aggregate, a, group));
      }
    }
    out.write('}');
  }

  *#rowsJson(snapshot: TableSnapshot, sub: PlanSubQuery, rows: readonly number[]): Work<void> {
    const out = this.#out;
    const layout = rowLayout(sub);
    if (layout.flat && rows.length > 1 && rows.length <= TOUCHED_ROWS)
      touchRows(snapshot, sub, rows);
    out.byte(0x5b);
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) out.byte(0x2c);
      this.#budget.addRows(1);
      // Rows without relations are written by a plain call: no generator per row.
      if (layout.flat) this.#flatRowJson(snapshot, sub, layout, rows[i] as number);
      else yield* this.#rowJson(snapshot, sub, rows[i] as number);
      if (this.#budget.tick(sub.outputs.length)) yield;
    }
    out.byte(0x5d);
  }

  /** A row of a selection with columns only (`layout.flat`). */
  #flatRowJson(snapshot: TableSnapshot, sub: PlanSubQuery, layout: RowLayout, rowId: number): void {
    const out = this.#out;
    const columns = (snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk).columns;
    const offset = rowId & OFFSET_MASK;
    const outputs = sub.outputs;
    const prefixes = layout.prefixBytes;
    const writers = layout.writers;
    for (let i = 0; i < outputs.length; i++) {
      const column = (outputs[i] as Extract<PlanOutput, { kind: 'column' }>).column;
      out.words(prefixes[i] as WordBytes);
      (writers[i] as ValueWriter)(out, column, columns[column.index] as ColumnChunk, offset);
    }
    if (outputs.length === 0) out.byte(0x7b);
    out.byte(0x7d);
  }

  *#rowJson(snapshot: TableSnapshot, sub: PlanSubQuery, rowId: number): Work<void> {
    const out = this.#out;
    const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
    const offset = rowId & OFFSET_MASK;
    const outputs = sub.outputs;
    const layout = rowLayout(sub);
    const prefixes = layout.prefixBytes;
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs[i]!;
      out.words(prefixes[i] as WordBytes);
      if (output.kind === 'column') {
        const write = layout.writers[i] as ValueWriter;
        write(out, output.column, chunk.columns[output.column.index] as ColumnChunk, offset);
      } else if (output.kind === 'relation') {
        yield* this.#relationJson(snapshot, output, rowId);
      } else if (output.kind === 'json') {
        const text = readComparable(chunk.columns[output.column.index] as ColumnChunk, offset);
        out.write((text === null ? undefined : jsonTextAt(text as string, output.steps)) ?? 'null');
      }
    }
    if (outputs.length === 0) out.byte(0x7b);
    out.byte(0x7d);
  }

  *#relationJson(snapshot: TableSnapshot, output: RelationOutput, rowId: number): Work<void> {
    const related = relatedRows(this.#generation, snapshot, output.relation, rowId);
    const target = this.#generation.table(output.relation.target);
    const sub = output.sub;
    // Without a filter the related rows are the matched ones (no pass over them).
    const matched =
      sub.filter === null ? related : yield* this.#matchingRows(target, sub.filter, related);
    if (output.relation.kind === 'forward') {
      const only = matched[0];
      if (only === undefined) this.#out.write('null');
      else {
        this.#budget.addRows(1);
        const layout = rowLayout(sub);
        if (layout.flat) this.#flatRowJson(target, sub, layout, only);
        else yield* this.#rowJson(target, sub, only);
      }
      return;
    }
    if (sub.aggregates.length > 0) {
      const groups = aggregateRows(target, sub, matched, this.#maxDistinct());
      if (this.#budget.tick(matched.length)) yield;
      yield* this.#grouped(target, sub, groups);
      return;
    }
    yield* this.#rowsJson(target, sub, yield* this.#page(target, sub, matched));
  }
}

function tooManyGroups(maxGroups: number): EngineError {
  return new EngineError(
    'too_many_rows',
    `The query would form more than ${maxGroups} groups (twice query.max_rows). Group by fewer or coarser fields, or narrow the filter.`,
  );
}

/** What a page of `count` rows is: a page of `totalMatched` rows, with more after it or not. */
function pageResult(plan: QueryPlan, count: number, totalMatched: number): QueryResult {
  return {
    count,
    totalMatched,
    hasMore: plan.offset + count < totalMatched,
    limit: plan.limit,
  };
}

/** Candidate rows from an index when the filter pins an indexed column with = or IN. */
function indexCandidates(snapshot: TableSnapshot, filter: PlanFilter): readonly number[] | null {
  if (filter.kind === 'and') {
    for (const operand of filter.operands) {
      const rows = indexCandidates(snapshot, operand);
      if (rows) return rows;
    }
    return null;
  }
  if (filter.kind !== 'compare' && filter.kind !== 'in') return null;
  if (filter.kind === 'compare' && (filter.operator !== '=' || filter.value === null)) return null;
  const index = snapshot.indexes.get(columnIndexName(filter.column.index));
  if (!index) return null;
  if (filter.kind === 'compare') return index.all(filter.value as Comparable);
  const rows: number[] = [];
  // A loop, not push(...ids): spreading a long id list overflows the call stack.
  for (const value of filter.values) for (const rowId of index.all(value)) rows.push(rowId);
  return rows.sort((a, b) => a - b);
}

/**
 * Whether `indexCandidates` of `filter` are exactly its rows: an index holds a row under its
 * column's value as read for comparisons (NULLs and deleted rows left out), so = or IN on that
 * column matches the rows found under its values, and no others.
 */
function answersWhole(filter: PlanFilter): boolean {
  return filter.kind === 'compare' || filter.kind === 'in';
}

/** `indexName([column])` of the first columns, made once. */
const COLUMN_INDEX_NAMES = Array.from({ length: 64 }, (_, column) => indexName([column]));

function columnIndexName(column: number): string {
  return COLUMN_INDEX_NAMES[column] ?? indexName([column]);
}

/** Ties in ORDER BY fall back to the primary key (then row order), so pages are deterministic. */
function tiebreaker(snapshot: TableSnapshot): (a: number, b: number) => number {
  const key = snapshot.schema.primaryKey;
  if (key.length === 0) return (a, b) => a - b;
  return (a, b) => {
    for (const column of key) {
      const order = compareSortValues(
        valueAt(snapshot, a, column),
        valueAt(snapshot, b, column),
        false,
      );
      if (order !== 0) return order;
    }
    return a - b;
  };
}

export type { CompiledRelation, CompiledTable };
