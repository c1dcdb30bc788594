import type { ColumnChunk } from '../storage/column-chunk.ts';
import { type Comparable, readComparable } from '../storage/column-reader.ts';
import type { TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import type { PlanAggregate, PlanSubQuery } from './plan.ts';

/** One GROUP BY group: a representative row for the key fields, and the running aggregates. */
export interface Group {
  readonly firstRow: number;
  count: number;
  readonly sums: Float64Array;
  readonly nonNull: Float64Array;
  /** Exact sums of BIGINT columns, which doubles cannot carry past 2^53, by aggregate. */
  readonly bigSums: (bigint | undefined)[];
}

/** One value of a composite GROUP BY key, length-prefixed when text, so parts never run together. */
function compositePart(value: Comparable | null): string {
  if (value === null) return 'null;';
  if (typeof value === 'string') return `string${value.length}:${value}`;
  return `${typeof value}:${String(value)};`;
}

/** Decimals with a small declared scale are summed as scaled integers: exact while below 2^53. */
function sumScale(aggregate: PlanAggregate): number {
  const column = aggregate.column;
  if (aggregate.fn === 'COUNT' || column?.type !== 'decimal') return 0;
  return column.scale !== undefined && column.scale <= 9 ? column.scale : 0;
}

const TWO_53 = 2 ** 53;

/**
 * Groups rows by the plan's GROUP BY columns and accumulates its aggregates, in first-seen
 * order. Rows come one by one (`addRow`, for candidates from an index or a relation) or a chunk
 * at a time (`addChunk`, for scans), where values are read straight from the typed arrays and a
 * dictionary-coded key column is resolved to its group once per distinct value.
 */
export class Aggregator {
  readonly #snapshot: TableSnapshot;
  readonly #aggregates: readonly PlanAggregate[];
  readonly #scales: readonly number[];
  readonly #keyColumns: readonly number[];
  readonly #bigint: readonly boolean[];
  // NULL is a key of its own; several key columns join into text that no two rows share.
  readonly #groups = new Map<Comparable | null, Group>();
  readonly #ordered: Group[] = [];

  constructor(snapshot: TableSnapshot, sub: PlanSubQuery) {
    this.#snapshot = snapshot;
    this.#aggregates = sub.aggregates;
    this.#scales = sub.aggregates.map((aggregate) => 10 ** sumScale(aggregate));
    this.#bigint = sub.aggregates.map((aggregate) => aggregate.column?.type === 'bigint');
    this.#keyColumns = sub.groupBy.map((column) => column.index);
  }

  groups(): Group[] {
    return this.#ordered;
  }

  #group(key: Comparable | null, rowId: number): Group {
    let group = this.#groups.get(key);
    if (!group) {
      group = {
        firstRow: rowId,
        count: 0,
        sums: new Float64Array(this.#aggregates.length),
        nonNull: new Float64Array(this.#aggregates.length),
        bigSums: [],
      };
      this.#groups.set(key, group);
      this.#ordered.push(group);
    }
    return group;
  }

  #keyAt(chunk: Chunk, offset: number): Comparable | null {
    const keyColumns = this.#keyColumns;
    if (keyColumns.length === 0) return '';
    if (keyColumns.length === 1) {
      return readComparable(chunk.columns[keyColumns[0] as number] as ColumnChunk, offset);
    }
    let key = '';
    for (const column of keyColumns) {
      key += compositePart(readComparable(chunk.columns[column] as ColumnChunk, offset));
    }
    return key;
  }

  #accumulate(group: Group, a: number, value: Comparable): void {
    group.nonNull[a] = (group.nonNull[a] as number) + 1;
    if (typeof value === 'bigint') {
      group.bigSums[a] = (group.bigSums[a] ?? 0n) + value;
    } else if (typeof value === 'number') {
      const scale = this.#scales[a] as number;
      const sum = (group.sums[a] as number) + (scale === 1 ? value : Math.round(value * scale));
      // Integer sums move to an exact bigint before a double would start to round them.
      if (this.#bigint[a] && (sum > TWO_53 || sum < -TWO_53)) {
        group.bigSums[a] =
          (group.bigSums[a] ?? 0n) + BigInt(group.sums[a] as number) + BigInt(value);
        group.sums[a] = 0;
      } else group.sums[a] = sum;
    }
  }

  addRow(rowId: number): void {
    const chunk = this.#snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
    const offset = rowId & OFFSET_MASK;
    const group = this.#group(this.#keyAt(chunk, offset), rowId);
    group.count++;
    for (let a = 0; a < this.#aggregates.length; a++) {
      const column = (this.#aggregates[a] as PlanAggregate).column;
      if (column === null) continue;
      const value = readComparable(chunk.columns[column.index] as ColumnChunk, offset);
      if (value !== null) this.#accumulate(group, a, value);
    }
  }

  /** Adds the live rows of chunk `index` that pass `test` (all of them without one). */
  addChunk(index: number, test: ((offset: number) => boolean) | undefined): void {
    const chunk = this.#snapshot.data.chunks[index] as Chunk;
    const base = index << CHUNK_BITS;
    const deleted = chunk.deleted;
    const groupOf = this.#chunkGroups(chunk, base);
    const readers = this.#aggregates.map((aggregate) =>
      aggregate.column === null
        ? null
        : numberReader(chunk.columns[aggregate.column.index] as ColumnChunk),
    );
    for (let offset = 0; offset < chunk.length; offset++) {
      if (deleted !== null && ((deleted[offset >>> 3] as number) & (1 << (offset & 7))) !== 0)
        continue;
      if (test !== undefined && !test(offset)) continue;
      const group = groupOf(offset);
      group.count++;
      for (let a = 0; a < readers.length; a++) {
        const reader = readers[a];
        if (reader === null || reader === undefined) continue;
        const value = reader(offset);
        if (value !== null) this.#accumulate(group, a, value);
      }
    }
  }

  /** Resolves a row of `chunk` to its group, by dictionary code where the key allows it. */
  #chunkGroups(chunk: Chunk, base: number): (offset: number) => Group {
    if (this.#keyColumns.length === 0) {
      return (offset) => this.#group('', base + offset);
    }
    const keyColumn = chunk.columns[this.#keyColumns[0] as number] as ColumnChunk;
    if (this.#keyColumns.length === 1 && keyColumn.kind === 'dict') {
      const byCode: (Group | undefined)[] = new Array(keyColumn.dictionary.length);
      const nulls = keyColumn.nulls;
      const codes = keyColumn.codes;
      return (offset) => {
        if (nulls !== null && ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) !== 0) {
          return this.#group(null, base + offset);
        }
        const code = codes[offset] as number;
        let group = byCode[code];
        if (group === undefined) {
          group = this.#group(keyColumn.dictionary[code] as string, base + offset);
          byCode[code] = group;
        }
        return group;
      };
    }
    return (offset) => this.#group(this.#keyAt(chunk, offset), base + offset);
  }
}

/** Reads a column chunk's values for aggregation: typed arrays directly when no value is exact. */
function numberReader(column: ColumnChunk): (offset: number) => Comparable | null {
  const nulls = column.nulls;
  if (column.kind === 'int32' || (column.kind === 'float64' && column.exact === null)) {
    const values = column.values;
    if (nulls === null) return (offset) => values[offset] as number;
    return (offset) =>
      ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) !== 0
        ? null
        : (values[offset] as number);
  }
  return (offset) => readComparable(column, offset);
}

/** Groups `rows` by the plan's GROUP BY columns and accumulates its aggregates, in first-seen order. */
export function aggregateRows(
  snapshot: TableSnapshot,
  sub: PlanSubQuery,
  rows: readonly number[],
): Group[] {
  const aggregator = new Aggregator(snapshot, sub);
  for (const rowId of rows) aggregator.addRow(rowId);
  return aggregator.groups();
}

/** The JSON text of aggregate `a` of `group`. */
export function aggregateJson(aggregate: PlanAggregate, a: number, group: Group): string {
  const nonNull = group.nonNull[a] as number;
  const sum = group.sums[a] as number;
  switch (aggregate.fn) {
    case 'COUNT':
      return String(aggregate.column === null ? group.count : nonNull);
    case 'SUM': {
      if (nonNull === 0) return 'null';
      const big = group.bigSums[a];
      if (big !== undefined) return String(big + BigInt(sum));
      const scale = sumScale(aggregate);
      return scale > 0 ? formatScaled(sum, scale) : String(sum);
    }
    case 'AVG': {
      if (nonNull === 0) return 'null';
      const big = group.bigSums[a];
      if (big !== undefined) return String(Number(big + BigInt(sum)) / nonNull);
      const scale = sumScale(aggregate);
      return String(scale > 0 ? sum / 10 ** scale / nonNull : sum / nonNull);
    }
  }
}

/** The value of aggregate `a` of `group` as a number, for ORDER BY. */
export function aggregateValue(aggregate: PlanAggregate, a: number, group: Group): number | null {
  const text = aggregateJson(aggregate, a, group);
  return text === 'null' ? null : Number(text);
}

function formatScaled(scaled: number, scale: number): string {
  const negative = scaled < 0;
  const digits = String(Math.abs(scaled)).padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}
