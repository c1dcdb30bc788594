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

/** Groups `rows` by the plan's GROUP BY columns and accumulates its aggregates, in first-seen order. */
export function aggregateRows(
  snapshot: TableSnapshot,
  sub: PlanSubQuery,
  rows: readonly number[],
): Group[] {
  // NULL is a key of its own; several key columns join into text that no two rows share.
  const groups = new Map<Comparable | null, Group>();
  const ordered: Group[] = [];
  const aggregates = sub.aggregates;
  const scales = aggregates.map((aggregate) => 10 ** sumScale(aggregate));
  const keyColumns = sub.groupBy.map((column) => column.index);
  const chunks = snapshot.data.chunks;
  for (const rowId of rows) {
    const chunk = chunks[rowId >>> CHUNK_BITS] as Chunk;
    const offset = rowId & OFFSET_MASK;
    let key: Comparable | null;
    if (keyColumns.length === 1) {
      key = readComparable(chunk.columns[keyColumns[0] as number] as ColumnChunk, offset);
    } else {
      key = '';
      for (const column of keyColumns) {
        key += compositePart(readComparable(chunk.columns[column] as ColumnChunk, offset));
      }
    }
    let group = groups.get(key);
    if (!group) {
      group = {
        firstRow: rowId,
        count: 0,
        sums: new Float64Array(aggregates.length),
        nonNull: new Float64Array(aggregates.length),
        bigSums: [],
      };
      groups.set(key, group);
      ordered.push(group);
    }
    group.count++;
    for (let a = 0; a < aggregates.length; a++) {
      const column = (aggregates[a] as PlanAggregate).column;
      if (column === null) continue;
      const value = readComparable(chunk.columns[column.index] as ColumnChunk, offset);
      if (value === null) continue;
      group.nonNull[a] = (group.nonNull[a] as number) + 1;
      if (column.type === 'bigint' && (typeof value === 'number' || typeof value === 'bigint')) {
        group.bigSums[a] = (group.bigSums[a] ?? 0n) + BigInt(value);
      } else if (typeof value === 'number') {
        const scale = scales[a] as number;
        group.sums[a] =
          (group.sums[a] as number) + (scale === 1 ? value : Math.round(value * scale));
      }
    }
  }
  return ordered;
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
      if (big !== undefined) return String(big);
      const scale = sumScale(aggregate);
      return scale > 0 ? formatScaled(sum, scale) : String(sum);
    }
    case 'AVG': {
      if (nonNull === 0) return 'null';
      const big = group.bigSums[a];
      if (big !== undefined) return String(Number(big) / nonNull);
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
