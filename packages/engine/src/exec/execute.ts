import type { CompiledTable } from '../schema/compiled-schema.ts';
import type { ColumnChunk } from '../storage/column-chunk.ts';
import { type Comparable, readComparable } from '../storage/column-reader.ts';
import { type Generation, indexName, type TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import {
  Aggregator,
  aggregateJson,
  aggregateRows,
  aggregateValue,
  type Group,
} from './aggregate-rows.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { PlanFilter, PlanSort, PlanSubQuery, QueryPlan } from './plan.ts';
import { RowFilter } from './predicate.ts';
import { relatedRows } from './relations.ts';
import { compareSortValues, topK, topKByScore } from './sort-rows.ts';
import { valueJson } from './value-json.ts';

/** Compares two rows of a page by one sort key, by their positions in the page. */
interface SortKeys {
  compare(a: number, b: number): number;
}

export interface QueryResult {
  /** The JSON array of result rows. */
  readonly data: string;
  readonly count: number;
  readonly totalMatched: number;
  readonly hasMore: boolean;
  /** The effective limit; null when unbounded. */
  readonly limit: number | null;
  readonly nextCursor?: string;
}

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

function valueAt(snapshot: TableSnapshot, rowId: number, column: number): Comparable | null {
  const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
  return readComparable(chunk.columns[column] as ColumnChunk, rowId & OFFSET_MASK);
}

/**
 * Runs validated plans against one generation and writes their results as JSON text directly,
 * without building row objects.
 */
export class Executor {
  readonly #generation: Generation;

  constructor(generation: Generation) {
    this.#generation = generation;
  }

  run(plan: QueryPlan): QueryResult {
    const snapshot = this.#generation.table(plan.table.name);
    if (plan.aggregates.length > 0)
      return this.#grouped(snapshot, plan, this.#aggregateAll(snapshot, plan));
    const matched = this.#matchingRows(snapshot, plan.filter, null);
    if (plan.after !== null) return this.#afterPage(snapshot, plan, matched, plan.after);
    const page = this.#page(snapshot, plan, matched);
    return {
      data: this.#rowsJson(snapshot, plan, page),
      count: page.length,
      totalMatched: matched.length,
      hasMore: plan.offset + page.length < matched.length,
      limit: plan.limit,
    };
  }

  /** Row ids matching `filter`, from `candidates` or, without them, from an index or a scan. */
  #matchingRows(
    snapshot: TableSnapshot,
    filter: PlanFilter | null,
    candidates: readonly number[] | null,
  ): number[] {
    const filterRows = filter ? new RowFilter(this.#generation, snapshot, filter) : null;
    const from = candidates ?? (filter ? indexCandidates(snapshot, filter) : null);
    if (from) return filterRows ? from.filter((rowId) => filterRows.matches(rowId)) : [...from];
    const rows: number[] = [];
    const chunks = snapshot.data.chunks;
    for (let c = 0; c < chunks.length; c++) {
      const chunk = chunks[c] as Chunk;
      const base = c << CHUNK_BITS;
      const deleted = chunk.deleted;
      const test = filterRows?.forChunk(c);
      for (let offset = 0; offset < chunk.length; offset++) {
        if (deleted !== null && ((deleted[offset >>> 3] as number) & (1 << (offset & 7))) !== 0)
          continue;
        if (test === undefined || test(offset)) rows.push(base + offset);
      }
    }
    return rows;
  }

  /** Groups the rows matching the plan's filter, scanning chunk by chunk when no index helps. */
  #aggregateAll(snapshot: TableSnapshot, sub: PlanSubQuery): Group[] {
    const aggregator = new Aggregator(snapshot, sub);
    const filterRows = sub.filter ? new RowFilter(this.#generation, snapshot, sub.filter) : null;
    const candidates = sub.filter ? indexCandidates(snapshot, sub.filter) : null;
    if (candidates) {
      for (const rowId of candidates)
        if (!filterRows || filterRows.matches(rowId)) aggregator.addRow(rowId);
    } else {
      for (let c = 0; c < snapshot.data.chunks.length; c++)
        aggregator.addChunk(c, filterRows?.forChunk(c));
    }
    return aggregator.groups();
  }

  /** Sorts (when asked) and cuts the OFFSET/LIMIT window out of `rows`. */
  #page(snapshot: TableSnapshot, sub: PlanSubQuery, rows: number[]): number[] {
    const end = sub.limit === null ? rows.length : Math.min(rows.length, sub.offset + sub.limit);
    if (sub.orderBy.length === 0) return rows.slice(sub.offset, end);
    // Sort keys are read once into arrays; the sort then compares positions in them.
    const tiebreak = tiebreaker(snapshot);
    const byPosition = (a: number, b: number) => tiebreak(rows[a] as number, rows[b] as number);
    let best: number[];
    const only = sub.orderBy.length === 1 ? (sub.orderBy[0] as PlanSort) : undefined;
    const scores = only ? this.#sortScores(snapshot, rows, only) : null;
    if (scores) best = topKByScore(scores, end, byPosition);
    else {
      const keys = sub.orderBy.map((sort) => this.#sortKeys(snapshot, rows, sort));
      const compare = (a: number, b: number): number => {
        for (let k = 0; k < keys.length; k++) {
          const order = (keys[k] as SortKeys).compare(a, b);
          if (order !== 0) return order;
        }
        return byPosition(a, b);
      };
      best = topK(Array.from(rows.keys()), end, compare);
    }
    return best.slice(sub.offset).map((position) => rows[position] as number);
  }

  /**
   * For a single numeric sort key, one score per row where lower sorts first: the value
   * ascending, its negation descending, NULLs at +Infinity ascending and -Infinity descending.
   * Null when the key is not numeric or a value is infinite (a score could not tell it from NULL).
   */
  #sortScores(
    snapshot: TableSnapshot,
    rows: readonly number[],
    sort: PlanSort,
  ): Float64Array | null {
    const scores = new Float64Array(rows.length);
    const sign = sort.descending ? -1 : 1;
    for (let i = 0; i < rows.length; i++) {
      const value = this.#sortValue(snapshot, rows[i] as number, sort);
      if (value === null)
        scores[i] = sort.descending ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
      else if (typeof value === 'number' && Number.isFinite(value)) scores[i] = sign * value;
      else return null;
    }
    return scores;
  }

  /** One sort key of every row, numbers in a typed array when the key is numeric. */
  #sortKeys(snapshot: TableSnapshot, rows: readonly number[], sort: PlanSort): SortKeys {
    const values = rows.map((rowId) => this.#sortValue(snapshot, rowId, sort));
    const descending = sort.descending;
    if (values.every((value) => value === null || typeof value === 'number')) {
      const numbers = new Float64Array(values.length);
      const nulls = new Uint8Array(values.length);
      values.forEach((value, i) => {
        if (value === null) nulls[i] = 1;
        else numbers[i] = value as number;
      });
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
    return valueAt(table, row, sort.source.column.index);
  }

  #afterPage(
    snapshot: TableSnapshot,
    plan: QueryPlan,
    matched: number[],
    cursor: string,
  ): QueryResult {
    const keyColumn = plan.table.columns[plan.table.primaryKey[0] as number];
    const keyIndex = keyColumn?.index ?? 0;
    const kind = keyColumn?.type === 'string' ? 'string' : 'number';
    const keyOf = (rowId: number) => valueAt(snapshot, rowId, keyIndex) as number | bigint | string;
    let rows = matched;
    if (cursor !== '') {
      const last = decodeCursor(cursor, kind);
      rows = matched.filter((rowId) => compareSortValues(keyOf(rowId), last, false) > 0);
    }
    const end = plan.limit === null ? rows.length : Math.min(rows.length, plan.offset + plan.limit);
    const page = topK(rows, end, (a, b) => compareSortValues(keyOf(a), keyOf(b), false)).slice(
      plan.offset,
    );
    const more = end < rows.length && page.length > 0;
    const lastRow = page[page.length - 1];
    return {
      data: this.#rowsJson(snapshot, plan, page),
      count: page.length,
      totalMatched: matched.length,
      hasMore: more,
      limit: plan.limit,
      ...(more && lastRow !== undefined ? { nextCursor: encodeCursor(keyOf(lastRow)) } : {}),
    };
  }

  #grouped(snapshot: TableSnapshot, sub: PlanSubQuery, grouped: Group[]): QueryResult {
    let groups = grouped;
    // Without GROUP BY keys an aggregate query has exactly one result row, even over no rows.
    if (groups.length === 0 && sub.groupBy.length === 0) {
      groups = [
        {
          firstRow: -1,
          count: 0,
          sums: new Float64Array(sub.aggregates.length),
          nonNull: new Float64Array(sub.aggregates.length),
          bigSums: [],
        },
      ];
    }
    const total = groups.length;
    const end = sub.limit === null ? total : Math.min(total, sub.offset + sub.limit);
    let page: Group[];
    if (sub.orderBy.length === 0) page = groups.slice(sub.offset, end);
    else {
      const keys = new Map<Group, (Comparable | null)[]>();
      for (const group of groups) {
        keys.set(
          group,
          sub.orderBy.map((sort) => this.#groupSortValue(snapshot, sub, group, sort)),
        );
      }
      page = topK(groups, end, (a, b) => {
        const keysA = keys.get(a) ?? [];
        const keysB = keys.get(b) ?? [];
        for (let i = 0; i < sub.orderBy.length; i++) {
          const order = compareSortValues(
            keysA[i] ?? null,
            keysB[i] ?? null,
            (sub.orderBy[i] as PlanSort).descending,
          );
          if (order !== 0) return order;
        }
        return a.firstRow - b.firstRow;
      }).slice(sub.offset);
    }
    let data = '[';
    page.forEach((group, i) => {
      if (i > 0) data += ',';
      data += this.#groupJson(snapshot, sub, group);
    });
    return {
      data: `${data}]`,
      count: page.length,
      totalMatched: total,
      hasMore: sub.offset + page.length < total,
      limit: sub.limit,
    };
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

  #groupJson(snapshot: TableSnapshot, sub: PlanSubQuery, group: Group): string {
    let json = '{';
    let first = true;
    for (const output of sub.outputs) {
      if (!first) json += ',';
      first = false;
      json += keyPrefix(output.key);
      if (output.kind === 'column') {
        if (group.firstRow < 0) json += 'null';
        else {
          const chunk = snapshot.data.chunks[group.firstRow >>> CHUNK_BITS] as Chunk;
          json += valueJson(
            output.column,
            chunk.columns[output.column.index] as ColumnChunk,
            group.firstRow & OFFSET_MASK,
          );
        }
      } else if (output.kind === 'aggregate') {
        const a = sub.aggregates.indexOf(output.aggregate);
        json += aggregateJson(output.aggregate, a, group);
      }
    }
    return `${json}}`;
  }

  #rowsJson(snapshot: TableSnapshot, sub: PlanSubQuery, rows: readonly number[]): string {
    let json = '[';
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) json += ',';
      json += this.#rowJson(snapshot, sub, rows[i] as number);
    }
    return `${json}]`;
  }

  #rowJson(snapshot: TableSnapshot, sub: PlanSubQuery, rowId: number): string {
    const chunk = snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
    const offset = rowId & OFFSET_MASK;
    let json = '{';
    const outputs = sub.outputs;
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs[i]!;
      if (i > 0) json += ',';
      json += keyPrefix(output.key);
      if (output.kind === 'column') {
        json += valueJson(output.column, chunk.columns[output.column.index] as ColumnChunk, offset);
      } else if (output.kind === 'relation') {
        json += this.#relationJson(snapshot, output.relation.kind === 'forward', output, rowId);
      }
    }
    return `${json}}`;
  }

  #relationJson(
    snapshot: TableSnapshot,
    toOne: boolean,
    output: {
      relation: import('../schema/compiled-schema.ts').CompiledRelation;
      sub: PlanSubQuery;
    },
    rowId: number,
  ): string {
    const related = relatedRows(this.#generation, snapshot, output.relation, rowId);
    const target = this.#generation.table(output.relation.target);
    const sub = output.sub;
    const matched = this.#matchingRows(target, sub.filter, related);
    if (toOne) {
      const only = matched[0];
      return only === undefined ? 'null' : this.#rowJson(target, sub, only);
    }
    if (sub.aggregates.length > 0) {
      return this.#grouped(target, sub, aggregateRows(target, sub, matched)).data;
    }
    return this.#rowsJson(target, sub, this.#page(target, sub, matched));
  }
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
  const index = snapshot.indexes.get(indexName([filter.column.index]));
  if (!index) return null;
  if (filter.kind === 'compare') return index.all(filter.value as Comparable);
  const rows: number[] = [];
  for (const value of filter.values) rows.push(...index.all(value));
  return rows.sort((a, b) => a - b);
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

export type { CompiledTable };
