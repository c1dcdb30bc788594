import { EngineError } from '../errors.ts';
import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { formatStoredNumber } from '../storage/column-builder.ts';
import type { ColumnChunk } from '../storage/column-chunk.ts';
import { isNullAt, readComparable } from '../storage/column-reader.ts';
import type { Comparable } from '../storage/comparable.ts';
import type { TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, CHUNK_ROWS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import { zoneMap } from '../storage/zone-map.ts';
import { DistinctValues } from './distinct-values.ts';
import {
  type Decimal,
  divideFloor,
  divideRounded,
  ExactSum,
  formatDecimal,
  parseDecimal,
  powerOfTen,
  rescale,
} from './exact-decimal.ts';
import type { PlanAggregate, PlanSubQuery } from './plan.ts';
import { ALWAYS, NEVER, unitsRangeOf } from './predicate.ts';
import { type SumRule, sumRule } from './sum-rule.ts';
import {
  addDistinctKeys,
  type ChunkRows,
  chunkExtremes,
  compareExtreme,
  distinctKey,
} from './value-aggregates.ts';

/** What the groups of one aggregation share: how each aggregate adds, and its widest scale. */
export interface AggregateScope {
  readonly rules: readonly SumRule[];
  /** Per aggregate, the largest scale of any group's exact sum, so ORDER BY compares at one. */
  readonly maxScales: Int32Array;
  /** Rows added (the most any group can count), which bounds how close two averages can be. */
  rows: number;
}

/** One GROUP BY group: a representative row for the key fields, and the running aggregates. */
export interface Group {
  /** Its index among the aggregation's groups, in the order they formed. */
  readonly id: number;
  readonly firstRow: number;
  count: number;
  /**
   * Per aggregate, a double sum (`float` rule), or the exact part of the sum that a double
   * holds: integer units of 10^-unitScale, moved to `exact` before they could reach 2^53.
   */
  readonly sums: Float64Array;
  readonly nonNull: Float64Array;
  /** Per aggregate, the part of the sum a double could not hold exactly. */
  readonly exact: (ExactSum | undefined)[];
  /** Per MIN or MAX, the row holding its value so far (-1: none, the aggregate is NULL)... */
  readonly extremeRows: Float64Array;
  /** ...and that value, as compared. */
  readonly extremes: (Comparable | null)[];
  /** Per COUNT(DISTINCT), the distinct values seen (`distinctKey`). */
  readonly distinct: (DistinctValues | undefined)[];
  readonly scope: AggregateScope;
}

function newScope(aggregates: readonly PlanAggregate[]): AggregateScope {
  const rules = aggregates.map(sumRule);
  return { rules, maxScales: Int32Array.from(rules, (rule) => rule.unitScale), rows: 0 };
}

function newGroup(id: number, firstRow: number, scope: AggregateScope): Group {
  const length = scope.rules.length;
  return {
    id,
    firstRow,
    count: 0,
    sums: new Float64Array(length),
    nonNull: new Float64Array(length),
    exact: [],
    extremeRows: new Float64Array(length).fill(-1),
    extremes: [],
    distinct: [],
    scope,
  };
}

/** The single result row of an aggregate query without GROUP BY keys over no rows. */
export function emptyGroup(sub: PlanSubQuery): Group {
  return newGroup(0, -1, newScope(sub.aggregates));
}

/** One value of a composite GROUP BY key, length-prefixed when text, so parts never run together. */
function compositePart(value: Comparable | null): string {
  if (value === null) return 'null;';
  if (typeof value === 'string') return `string${value.length}:${value}`;
  return `${typeof value}:${String(value)};`;
}

/**
 * `#addChunkBySlot`'s scratch arrays: each counted row's slot and, when not every row counts,
 * its offset. One pair for the thread: a chunk is added in one synchronous call, never
 * interleaved with another query's, and 512 KB allocated per query cost more in GC than a scan.
 */
const scratch = {
  slots: new Uint32Array(CHUNK_ROWS),
  picked: new Uint32Array(CHUNK_ROWS),
  groupIds: new Int32Array(CHUNK_ROWS),
};

const TWO_53 = 2 ** 53;
const COUNT_ONLY = 0;
const FLOAT_SUM = -1;

function factorOf(rule: SumRule): number {
  switch (rule.kind) {
    case 'count':
      return COUNT_ONLY;
    case 'float':
      return FLOAT_SUM;
    case 'scaled':
      return rule.factor;
    default:
      return 1;
  }
}
/** Scaled decimals below this are rounded to their exact units with room to spare. */
const TWO_50 = 2 ** 50;

/**
 * Characters of text COUNT(DISTINCT) may keep for one aggregation, beside its count of values
 * (`maxDistinct`): a few long texts must not hold the memory many short ones would not.
 */
const MAX_DISTINCT_CHARS = 32 * 1024 * 1024;

/** Whether the aggregate reads each value itself (MIN, MAX, COUNT(DISTINCT)) instead of adding it. */
function readsValues(aggregate: PlanAggregate): boolean {
  return (
    aggregate.column !== null &&
    (aggregate.fn === 'MIN' || aggregate.fn === 'MAX' || aggregate.distinct)
  );
}

/**
 * Groups rows by the plan's GROUP BY columns and accumulates its aggregates, in first-seen
 * order. Rows come one by one (`addRow`, for candidates from an index or a relation) or a chunk
 * at a time (`addChunk`, for scans), where values are read straight from the typed arrays and a
 * dictionary-coded key column is resolved to its group once per distinct value.
 */
export class Aggregator {
  readonly #snapshot: TableSnapshot;
  readonly #aggregates: readonly PlanAggregate[];
  readonly #scope: AggregateScope;
  /** Per aggregate: 10^unitScale for exact sums, or COUNT_ONLY / FLOAT_SUM. */
  readonly #factors: Float64Array;
  /** Per aggregate: 1 where a scaled value rounds to its units (a declared scale). */
  readonly #rounds: Uint8Array;
  readonly #keyColumns: readonly number[];
  /** The aggregates that read each value (`readsValues`), by index. */
  readonly #valueAggregates: readonly number[];
  /** COUNT(DISTINCT) values kept, over every group, at most `#maxDistinct`. */
  #distinctValues = 0;
  #distinctChars = 0;
  readonly #maxDistinct: number;
  // NULL is a key of its own; several key columns join into text that no two rows share.
  readonly #groups = new Map<Comparable | null, Group>();
  readonly #ordered: Group[] = [];

  constructor(snapshot: TableSnapshot, sub: PlanSubQuery, maxDistinct = Number.POSITIVE_INFINITY) {
    this.#snapshot = snapshot;
    this.#maxDistinct = maxDistinct;
    this.#valueAggregates = sub.aggregates.flatMap((aggregate, a) =>
      readsValues(aggregate) ? [a] : [],
    );
    this.#aggregates = sub.aggregates;
    this.#scope = newScope(sub.aggregates);
    this.#factors = Float64Array.from(this.#scope.rules, factorOf);
    this.#rounds = Uint8Array.from(this.#scope.rules, (rule) => (rule.kind === 'scaled' ? 1 : 0));
    this.#keyColumns = sub.groupBy.map((column) => column.index);
  }

  groups(): Group[] {
    return this.#ordered;
  }

  #group(key: Comparable | null, rowId: number): Group {
    let group = this.#groups.get(key);
    if (!group) {
      group = newGroup(this.#ordered.length, rowId, this.#scope);
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

  /**
   * Adds one non-NULL value: a stored double, or the source text a double could not carry.
   * The common case stays on doubles: a value whose exact units (value × 10^scale) are known
   * below 2^50, added to a sum still below 2^53. Everything else takes `#addExact`.
   */
  #accumulate(group: Group, a: number, value: number | string): void {
    group.nonNull[a] = (group.nonNull[a] as number) + 1;
    const factor = this.#factors[a] as number;
    if (factor === COUNT_ONLY) return;
    if (factor === FLOAT_SUM) {
      group.sums[a] = (group.sums[a] as number) + Number(value);
      return;
    }
    if (typeof value === 'number') {
      const scaled = value * factor;
      const units = Math.round(scaled);
      // Below 2^50 a stored decimal rounds to its own digits; an unconstrained NUMERIC's
      // fractions have no fixed scale, so only its whole values qualify.
      if (scaled < TWO_50 && scaled > -TWO_50 && (units === scaled || this.#rounds[a] === 1)) {
        const sum = (group.sums[a] as number) + units;
        if (sum < TWO_53 && sum > -TWO_53) {
          group.sums[a] = sum;
          return;
        }
        this.#spill(group, a, units);
        return;
      }
      this.#addText(group, a, this.#storedText(a, value));
    } else this.#addText(group, a, value);
  }

  /**
   * Adds one non-NULL value of a DECIMAL chunk stored as units (storage/decimal-units.ts): its
   * units, already the integer an exact sum adds, or the source text kept instead.
   */
  #accumulateUnits(group: Group, a: number, value: number | string): void {
    if (typeof value === 'string') {
      this.#accumulate(group, a, value);
      return;
    }
    group.nonNull[a] = (group.nonNull[a] as number) + 1;
    if (this.#factors[a] !== COUNT_ONLY) this.#addUnits(group, a, value);
  }

  /** The double part would reach 2^53: it moves to the exact part, with `units`. */
  #spill(group: Group, a: number, units: number): void {
    const unitScale = (this.#scope.rules[a] as SumRule).unitScale;
    this.#exactOf(group, a).add(BigInt(group.sums[a] as number) + BigInt(units), unitScale);
    group.sums[a] = 0;
  }

  #addText(group: Group, a: number, text: string): void {
    const exact = this.#exactOf(group, a);
    const value = parseDecimal(text);
    if (value === null) {
      exact.nonFinite += Number(text);
      return;
    }
    exact.add(value.units, value.scale);
    const maxScales = this.#scope.maxScales;
    if (exact.scale > (maxScales[a] as number)) maxScales[a] = exact.scale;
  }

  #exactOf(group: Group, a: number): ExactSum {
    let exact = group.exact[a];
    if (exact === undefined) {
      exact = new ExactSum((this.#scope.rules[a] as SumRule).unitScale);
      group.exact[a] = exact;
    }
    return exact;
  }

  /** The source text of a stored double that needed no text of its own (column-builder). */
  #storedText(a: number, value: number): string {
    const column = (this.#aggregates[a] as PlanAggregate).column;
    return formatStoredNumber(value, column?.type ?? 'decimal', column?.scale);
  }

  /**
   * MIN, MAX or COUNT(DISTINCT) `a` reads the value of row `rowId` (at `offset` of `chunk`):
   * MIN and MAX keep the row whose value sorts first or last, COUNT(DISTINCT) its key.
   */
  #readValue(group: Group, a: number, chunk: Chunk, offset: number, rowId: number): void {
    const aggregate = this.#aggregates[a] as PlanAggregate;
    const column = aggregate.column as CompiledColumn;
    const values = chunk.columns[column.index] as ColumnChunk;
    if (aggregate.distinct) {
      const key = distinctKey(column, values, offset);
      if (key === null) return;
      if (this.#distinctSet(group, a).add(key)) {
        this.#countDistinct(1, typeof key === 'string' ? key.length : 0);
      }
      return;
    }
    this.#offerExtreme(group, a, values, offset, rowId);
  }

  #distinctSet(group: Group, a: number): DistinctValues {
    let seen = group.distinct[a];
    if (seen === undefined) {
      seen = new DistinctValues();
      group.distinct[a] = seen;
    }
    return seen;
  }

  /** Counts distinct values kept; refuses the query past what it may keep. */
  #countDistinct(values: number, chars: number): void {
    this.#distinctValues += values;
    this.#distinctChars += chars;
    if (this.#distinctValues > this.#maxDistinct || this.#distinctChars > MAX_DISTINCT_CHARS) {
      throw tooManyDistinct(this.#maxDistinct);
    }
  }

  /**
   * MIN or MAX `a` of `group` takes the value at `offset` of `values` (row `rowId`) when it
   * sorts before (MIN) or after (MAX) the one it holds.
   */
  #offerExtreme(group: Group, a: number, values: ColumnChunk, offset: number, rowId: number) {
    const aggregate = this.#aggregates[a] as PlanAggregate;
    const column = aggregate.column as CompiledColumn;
    const value = readComparable(values, offset);
    if (value === null) return;
    const bestRow = group.extremeRows[a] as number;
    if (bestRow >= 0) {
      const bestChunk = this.#snapshot.data.chunks[bestRow >>> CHUNK_BITS] as Chunk;
      const order = compareExtreme(
        column,
        value,
        values,
        offset,
        group.extremes[a] as Comparable,
        bestChunk.columns[column.index] as ColumnChunk,
        bestRow & OFFSET_MASK,
      );
      if (aggregate.fn === 'MIN' ? order >= 0 : order <= 0) return;
    }
    group.extremeRows[a] = rowId;
    group.extremes[a] = value;
  }

  addRow(rowId: number): void {
    const chunk = this.#snapshot.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
    const offset = rowId & OFFSET_MASK;
    const group = this.#group(this.#keyAt(chunk, offset), rowId);
    group.count++;
    this.#scope.rows++;
    for (const a of this.#valueAggregates) this.#readValue(group, a, chunk, offset, rowId);
    for (let a = 0; a < this.#aggregates.length; a++) {
      const column = (this.#aggregates[a] as PlanAggregate).column;
      if (column === null) continue;
      const values = chunk.columns[column.index] as ColumnChunk;
      const value = summandAt(values, offset);
      if (value === null) continue;
      if (values.kind === 'decimal') this.#accumulateUnits(group, a, value);
      else this.#accumulate(group, a, value);
    }
  }

  /** Adds the live rows of chunk `index` that pass `test` (all of them without one). */
  addChunk(index: number, chunkTest: ((offset: number) => boolean) | undefined): void {
    if (chunkTest === NEVER) return;
    const test = chunkTest === ALWAYS ? undefined : chunkTest;
    const chunk = this.#snapshot.data.chunks[index] as Chunk;
    const base = index << CHUNK_BITS;
    if (this.#addChunkBySlot(chunk, base, test)) return;
    const deleted = chunk.deleted;
    const groupOf = this.#chunkGroups(chunk, base);
    const readers = this.#aggregates.map((aggregate) =>
      aggregate.column === null || readsValues(aggregate)
        ? null
        : summandReader(chunk.columns[aggregate.column.index] as ColumnChunk),
    );
    const valueAggregates = this.#valueAggregates;
    const visited = scratch.picked;
    const groupIds = scratch.groupIds;
    let count = 0;
    const inUnits = this.#aggregates.map(
      (aggregate) =>
        aggregate.column !== null && chunk.columns[aggregate.column.index]?.kind === 'decimal',
    );
    let added = 0;
    for (let offset = 0; offset < chunk.length; offset++) {
      // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
      if (deleted !== null && ((deleted[offset >>> 3] as number) & (1 << (offset & 7))) !== 0)
        continue;
      if (test !== undefined && !test(offset)) continue;
      const group = groupOf(offset);
      group.count++;
      added++;
      if (valueAggregates.length > 0) {
        visited[count] = offset;
        groupIds[count++] = group.id;
      }
      for (let a = 0; a < readers.length; a++) {
        const reader = readers[a];
        if (reader === null || reader === undefined) continue;
        const value = reader(offset);
        if (value === null) continue;
        if (inUnits[a]) this.#accumulateUnits(group, a, value);
        else this.#accumulate(group, a, value);
      }
    }
    this.#scope.rows += added;
    if (count > 0) {
      const rows = { offsets: visited, groupIds, count, groups: this.#ordered.length };
      for (const a of valueAggregates) this.#chunkValues(chunk, base, a, rows);
    }
  }

  /** MIN, MAX or COUNT(DISTINCT) `a` over a chunk's visited rows, column at a time. */
  #chunkValues(chunk: Chunk, base: number, a: number, rows: ChunkRows): void {
    const aggregate = this.#aggregates[a] as PlanAggregate;
    const column = aggregate.column as CompiledColumn;
    const values = chunk.columns[column.index] as ColumnChunk;
    const groups = this.#ordered;
    if (aggregate.distinct) {
      const setOf = (id: number) => this.#distinctSet(groups[id] as Group, a);
      const { added, chars } = addDistinctKeys(column, values, rows, setOf);
      this.#countDistinct(added, chars);
      return;
    }
    const found = chunkExtremes(values, aggregate.fn === 'MIN', rows);
    if (found === null) {
      for (let i = 0; i < rows.count; i++) {
        const offset = rows.offsets[i] as number;
        this.#offerExtreme(
          groups[rows.groupIds[i] as number] as Group,
          a,
          values,
          offset,
          base + offset,
        );
      }
      return;
    }
    for (const id of found.ids) {
      const offset = found.offsets[id] as number;
      this.#offerExtreme(groups[id] as Group, a, values, offset, base + offset);
    }
  }

  /**
   * `addChunk` column at a time, when the key is absent or one dictionary column and every
   * aggregate is a COUNT, an exact integer sum of 32-bit values, or an exact sum of a DECIMAL's
   * units that a double holds (`unitsSumExactly`): one pass gives each row its
   * slot (its dictionary code, or the NULL key's slot), then each aggregate's column is summed
   * per slot in typed arrays, and each slot's totals go to its group once. A chunk's integer
   * sum stays below 2^47, its units' sum below 2^53, exact in a double, so the totals are those
   * of adding row by row.
   * False, having added nothing, for other chunks.
   */
  #addChunkBySlot(
    chunk: Chunk,
    base: number,
    test: ((offset: number) => boolean) | undefined,
  ): boolean {
    const keyColumns = this.#keyColumns;
    const key = keyColumns.length === 1 ? chunk.columns[keyColumns[0] as number] : undefined;
    if (keyColumns.length > 1 || (key !== undefined && key.kind !== 'dict')) return false;
    if (this.#valueAggregates.length > 0) return false;
    const aggregates = this.#aggregates;
    for (let a = 0; a < aggregates.length; a++) {
      const column = (aggregates[a] as PlanAggregate).column;
      if (column === null || this.#factors[a] === COUNT_ONLY) continue;
      const rule = (this.#scope.rules[a] as SumRule).kind;
      const values = chunk.columns[column.index] as ColumnChunk;
      if (rule === 'integer' && values.kind === 'int32') continue;
      if (rule !== 'scaled' || !unitsSumExactly(values)) return false;
    }
    const dictionary = key?.kind === 'dict' ? key.dictionary : null;
    const slots = dictionary === null ? 1 : dictionary.length + 1;
    const nullSlot = slots - 1;
    const slotOf = scratch.slots;
    const counts = new Float64Array(slots);
    const firstOffset = new Int32Array(slots);
    const deleted = chunk.deleted;
    const codes = key?.kind === 'dict' ? key.codes : null;
    const keyNulls = key?.nulls ?? null;
    const length = chunk.length;
    // Every row counts, under its own code: the tightest loops below read the codes as slots.
    const direct = deleted === null && test === undefined && keyNulls === null;
    // Without `picked`, every row counts: row i is at offset i.
    let picked: Uint32Array | null = null;
    let selected = length;
    if (direct && codes !== null) {
      for (let offset = 0; offset < length; offset++) {
        const code = codes[offset]!;
        slotOf[offset] = code;
        if (counts[code] === 0) firstOffset[code] = offset;
        counts[code]!++;
      }
    } else if (direct) {
      slotOf.fill(0, 0, length);
      counts[0] = length;
    } else {
      // The rows that count, listed once (`picked`, their slots in `slotOf`): a selective
      // filter leaves the loops below few rows to visit.
      picked = scratch.picked;
      // A DECIMAL range test is compared in a loop of its own, not called per row.
      const range = test === undefined || deleted !== null ? undefined : unitsRangeOf(test);
      selected =
        range === undefined
          ? pickRows(length, deleted, test, picked)
          : pickRange(range.values, range.low, range.high, length, picked);
      for (let i = 0; i < selected; i++) {
        const offset = picked[i]!;
        let slot = 0;
        if (codes !== null) {
          // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
          slot =
            keyNulls !== null && (keyNulls[offset >>> 3]! & (1 << (offset & 7))) !== 0
              ? nullSlot
              : codes[offset]!;
        }
        slotOf[i] = slot;
        if (counts[slot] === 0) firstOffset[slot] = offset;
        counts[slot]!++;
      }
    }
    const sums: (Float64Array | null)[] = [];
    const nonNulls: Float64Array[] = [];
    for (let a = 0; a < aggregates.length; a++) {
      const column = (aggregates[a] as PlanAggregate).column;
      const values = column === null ? undefined : chunk.columns[column.index];
      if (values === undefined) {
        sums.push(null);
        nonNulls.push(counts);
        continue;
      }
      const nulls = values.nulls;
      const data =
        (values.kind === 'int32' || values.kind === 'decimal') && this.#factors[a] !== COUNT_ONLY
          ? values.values
          : null;
      const sum = data === null ? null : new Float64Array(slots);
      const nonNull = nulls === null ? counts : new Float64Array(slots);
      if (direct && nulls === null && sum !== null) {
        if (data instanceof Int32Array) {
          if (codes !== null) sumByCode(codes, data, sum, length);
          else sum[0] = sumAll(data, length);
        } else if (codes !== null) sumUnitsByCode(codes, data!, sum, length);
        else sum[0] = sumAllUnits(data!, length);
      } else if (sum !== null || nonNull !== counts) {
        for (let i = 0; i < selected; i++) {
          const offset = picked === null ? i : picked[i]!;
          const slot = slotOf[i]!;
          if (nulls !== null) {
            if ((nulls[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
            nonNull[slot]!++;
          }
          if (sum !== null) sum[slot]! += data![offset]!;
        }
      }
      sums.push(sum);
      nonNulls.push(nonNull);
    }
    // Groups are formed in the order their first rows come, as row by row.
    const used: number[] = [];
    for (let slot = 0; slot < slots; slot++) if (counts[slot]! > 0) used.push(slot);
    used.sort((x, y) => firstOffset[x]! - firstOffset[y]!);
    let added = 0;
    for (const slot of used) {
      const firstRow = base + firstOffset[slot]!;
      const group = this.#group(
        dictionary === null ? '' : slot === nullSlot ? null : (dictionary[slot] as string),
        firstRow,
      );
      group.count += counts[slot]!;
      added += counts[slot]!;
      for (let a = 0; a < aggregates.length; a++) {
        if ((aggregates[a] as PlanAggregate).column === null) continue;
        const nonNull = nonNulls[a]![slot]!;
        group.nonNull[a] = group.nonNull[a]! + nonNull;
        const sum = sums[a];
        if (sum !== null && sum !== undefined && nonNull > 0) this.#addUnits(group, a, sum[slot]!);
      }
    }
    this.#scope.rows += added;
    return true;
  }

  /**
   * Adds integer `units` (a safe integer) to an exact sum, as `#accumulate` does for one value.
   * A double sum past 2^53 may be rounded, but only ever to a value past 2^53: it then spills.
   */
  #addUnits(group: Group, a: number, units: number): void {
    const sum = group.sums[a]! + units;
    if (sum < TWO_53 && sum > -TWO_53) group.sums[a] = sum;
    else this.#spill(group, a, units);
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
        // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
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

/** Lists in `picked` the offsets of the first `length` rows live and passing `test`; how many. */
function pickRows(
  length: number,
  deleted: Uint8Array | null,
  test: ((offset: number) => boolean) | undefined,
  picked: Uint32Array,
): number {
  let count = 0;
  for (let offset = 0; offset < length; offset++) {
    // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
    if (deleted !== null && (deleted[offset >>> 3]! & (1 << (offset & 7))) !== 0) continue;
    if (test !== undefined && !test(offset)) continue;
    picked[count++] = offset;
  }
  return count;
}

/** `pickRows` for a DECIMAL range test (predicate.ts `unitsRangeOf`) of a chunk with no deletes. */
function pickRange(
  values: Float64Array,
  low: number,
  high: number,
  length: number,
  picked: Uint32Array,
): number {
  let count = 0;
  for (let offset = 0; offset < length; offset++) {
    const value = values[offset]!;
    if (value >= low && value <= high) picked[count++] = offset;
  }
  return count;
}

/**
 * Whether a chunk's DECIMAL units add exactly in a double, whatever rows a slot takes: they are
 * all units (no source text) and the chunk's largest magnitude times its rows stays below 2^53.
 */
function unitsSumExactly(column: ColumnChunk): boolean {
  if (column.kind !== 'decimal' || column.exact !== null) return false;
  const zone = zoneMap(column);
  if (zone === null) return false;
  const largest = Math.max(Math.abs(zone.min), Math.abs(zone.max));
  return zone.min > zone.max || largest * column.values.length < TWO_53;
}

/** `sumByCode` of a DECIMAL's units (see `unitsSumExactly`). */
function sumUnitsByCode(
  codes: Uint16Array,
  data: Float64Array,
  sums: Float64Array,
  length: number,
): void {
  for (let offset = 0; offset < length; offset++) sums[codes[offset]!]! += data[offset]!;
}

/** `sumAll` of a DECIMAL's units (see `unitsSumExactly`). */
function sumAllUnits(data: Float64Array, length: number): number {
  let total = 0;
  for (let offset = 0; offset < length; offset++) total += data[offset]!;
  return total;
}

/** Adds each of the first `length` values to its code's sum. */
function sumByCode(codes: Uint16Array, data: Int32Array, sums: Float64Array, length: number): void {
  for (let offset = 0; offset < length; offset++) sums[codes[offset]!]! += data[offset]!;
}

/** The sum of the first `length` values (below 2^47: exact). */
function sumAll(data: Int32Array, length: number): number {
  let total = 0;
  for (let offset = 0; offset < length; offset++) total += data[offset]!;
  return total;
}

/**
 * The value at `offset` as a sum needs it (null for NULL): the stored double (a DECIMAL's units),
 * or the source text kept beside it when the double does not carry every digit (`exact`).
 */
function summandAt(column: ColumnChunk, offset: number): number | string | null {
  if (isNullAt(column, offset)) return null;
  switch (column.kind) {
    case 'int32':
      return column.values[offset] as number;
    case 'float64':
    case 'decimal':
      return column.exact?.get(offset) ?? (column.values[offset] as number);
    default:
      // Only COUNT reads other columns, and it counts without looking.
      return 0;
  }
}

/** `summandAt` for one chunk: straight from the typed array when no value has source text. */
function summandReader(column: ColumnChunk): (offset: number) => number | string | null {
  const nulls = column.nulls;
  if (
    column.kind === 'int32' ||
    ((column.kind === 'float64' || column.kind === 'decimal') && column.exact === null)
  ) {
    const values = column.values;
    if (nulls === null) return (offset) => values[offset] as number;
    // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
    return (offset) =>
      ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) !== 0
        ? null
        : (values[offset] as number);
  }
  return (offset) => summandAt(column, offset);
}

/** Groups `rows` by the plan's GROUP BY columns and accumulates its aggregates, in first-seen order. */
export function aggregateRows(
  snapshot: TableSnapshot,
  sub: PlanSubQuery,
  rows: readonly number[],
  maxDistinct?: number,
): Group[] {
  const aggregator = new Aggregator(snapshot, sub, maxDistinct);
  for (const rowId of rows) aggregator.addRow(rowId);
  return aggregator.groups();
}

/** The JSON text of aggregate `a` of `group` (docs/instance-api.md, Aggregates). */
export function aggregateJson(aggregate: PlanAggregate, a: number, group: Group): string {
  const nonNull = group.nonNull[a] as number;
  if (aggregate.distinct) return String(group.distinct[a]?.size ?? 0);
  if (aggregate.fn === 'COUNT') return String(aggregate.column === null ? group.count : nonNull);
  if (aggregate.fn === 'MIN' || aggregate.fn === 'MAX') {
    throw new Error('MIN and MAX are written from their rows (Executor)');
  }
  if (nonNull === 0) return 'null';
  const rule = group.scope.rules[a] as SumRule;
  const sum = group.sums[a] as number;
  const exact = group.exact[a];
  if (rule.kind === 'float') return numberJson(aggregate.fn === 'SUM' ? sum : sum / nonNull);
  if (exact !== undefined && exact.nonFinite !== 0) return 'null';
  if (rule.kind === 'integer') {
    if (exact === undefined) return aggregate.fn === 'SUM' ? String(sum) : String(sum / nonNull);
    const total = exactTotal(rule, sum, exact).units;
    if (aggregate.fn === 'SUM') return total.toString();
    // Below 2^53 the double quotient is the correctly rounded one; past it, a double would
    // drop digits of the sum: the exact quotient, to 4 decimals (as MySQL prints it).
    if (total < BIG_TWO_53 && total > -BIG_TWO_53) return String(Number(total) / nonNull);
    return formatDecimal(divideRounded(total * INTEGER_AVG_FACTOR, BigInt(nonNull)), 4);
  }
  const total = exactTotal(rule, sum, exact);
  // SUM prints the declared scale (or the values' largest); AVG four more digits, rounded.
  const declared = rule.kind === 'scaled' || rule.kind === 'decimal' ? rule.outputScale : 0;
  const scale = Math.max(total.scale, declared ?? 0);
  const units = rescale(total.units, total.scale, scale);
  if (aggregate.fn === 'SUM') return formatDecimal(units, scale);
  return formatDecimal(
    divideRounded(units * powerOfTen(AVG_EXTRA_SCALE), BigInt(nonNull)),
    scale + AVG_EXTRA_SCALE,
  );
}

/**
 * The value of aggregate `a` of `group` for ORDER BY. Exact sums compare as integers at the
 * widest scale among the groups; exact averages as their quotients floored at enough digits
 * that two different ones never meet (they differ by at least 1 / (count₁ × count₂) units).
 */
export function aggregateValue(
  aggregate: PlanAggregate,
  a: number,
  group: Group,
): Comparable | null {
  const nonNull = group.nonNull[a] as number;
  if (aggregate.distinct) return group.distinct[a]?.size ?? 0;
  if (aggregate.fn === 'COUNT') return aggregate.column === null ? group.count : nonNull;
  if (aggregate.fn === 'MIN' || aggregate.fn === 'MAX') return group.extremes[a] ?? null;
  if (nonNull === 0) return null;
  const rule = group.scope.rules[a] as SumRule;
  const sum = group.sums[a] as number;
  const exact = group.exact[a];
  if (rule.kind === 'float') return aggregate.fn === 'SUM' ? sum : sum / nonNull;
  if (exact !== undefined && exact.nonFinite !== 0) return exact.nonFinite;
  const total = exactTotal(rule, sum, exact);
  const scale = group.scope.maxScales[a] as number;
  let units = rescale(total.units, total.scale, scale);
  if (aggregate.fn === 'AVG') {
    const digits = 2 * String(group.scope.rows).length;
    units = divideFloor(units * powerOfTen(digits), BigInt(nonNull));
  }
  const asNumber = Number(units);
  return Number.isSafeInteger(asNumber) ? asNumber : units;
}

/** AVG of DECIMAL(p, s) prints s + 4 decimals (MySQL's default `div_precision_increment`). */
const AVG_EXTRA_SCALE = 4;
const INTEGER_AVG_FACTOR = powerOfTen(4);
const BIG_TWO_53 = 2n ** 53n;

/** The whole exact sum: the exact part plus the double's integer units. */
function exactTotal(rule: SumRule, sum: number, exact: ExactSum | undefined): Decimal {
  if (exact === undefined) return { units: BigInt(sum), scale: rule.unitScale };
  const scale = Math.max(exact.scale, rule.unitScale);
  return {
    units: rescale(exact.units, exact.scale, scale) + rescale(BigInt(sum), rule.unitScale, scale),
    scale,
  };
}

function tooManyDistinct(maxDistinct: number): EngineError {
  return new EngineError(
    'too_many_rows',
    `COUNT(DISTINCT ...) would keep more than ${maxDistinct} distinct values (10 times query.max_rows), or more than ${MAX_DISTINCT_CHARS / 1024 / 1024} Mi characters of them. Group by finer fields, or narrow the filter.`,
  );
}

function numberJson(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}
