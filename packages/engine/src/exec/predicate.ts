import type { CompareOperator } from '@replix/query';
import type { ColumnChunk, DecimalChunk } from '../storage/column-chunk.ts';
import { isNullAt, readComparable } from '../storage/column-reader.ts';
import { type Comparable, numericComparable } from '../storage/comparable.ts';
import type { TableSnapshot } from '../storage/generation.ts';
import type { Key } from '../storage/key-index.ts';
import { rowKey } from '../storage/row-key.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import { zoneMap } from '../storage/zone-map.ts';
import { compareCodePoints } from './code-point-compare.ts';
import { parseDecimal, rescale } from './exact-decimal.ts';
import { jsonValueAt } from './json-path.ts';
import type { PlanFilter } from './plan.ts';
import {
  betweenRange,
  compareRange,
  inRangeExact,
  rangeVerdictUnits,
  type UnitRange,
} from './unit-range.ts';

/** Tests rows of one chunk by offset. */
export type OffsetTest = (offset: number) => boolean;

function compareValues(a: Comparable, b: Comparable): number {
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  return a < b ? -1 : a > b ? 1 : 0;
}

function operatorTest(operator: CompareOperator, value: Comparable): (x: Comparable) => boolean {
  switch (operator) {
    case '=':
      return (x) => x === value;
    case '!=':
      return (x) => x !== value;
    case '<':
      return (x) => compareValues(x, value) < 0;
    case '<=':
      return (x) => compareValues(x, value) <= 0;
    case '>':
      return (x) => compareValues(x, value) > 0;
    case '>=':
      return (x) => compareValues(x, value) >= 0;
  }
}

function numberTest(operator: CompareOperator, value: number): (x: number) => boolean {
  switch (operator) {
    case '=':
      return (x) => x === value;
    case '!=':
      return (x) => x !== value;
    case '<':
      return (x) => x < value;
    case '<=':
      return (x) => x <= value;
    case '>':
      return (x) => x > value;
    case '>=':
      return (x) => x >= value;
  }
}

/** The test of a chunk no row of which passes: scans skip the chunk. */
export const NEVER: OffsetTest = () => false;
/** The test of a chunk every row of which passes (deleted rows aside): scans drop the test. */
export const ALWAYS: OffsetTest = () => true;

/** A dictionary chunk's test as data: a row passes when `matches[codes[offset]]` is 1. */
export interface CodeTest {
  readonly codes: Uint16Array;
  readonly matches: Uint8Array;
}

const codeTests = new WeakMap<OffsetTest, CodeTest>();

/** A DECIMAL chunk's test as data: a row passes when `low ≤ values[offset] ≤ high`. */
export interface UnitsRangeTest {
  readonly values: Float64Array;
  readonly low: number;
  readonly high: number;
}

const unitsRangeTests = new WeakMap<OffsetTest, UnitsRangeTest>();

/**
 * The units and bounds behind `test` when it compares one DECIMAL chunk without NULLs or texts
 * (`unitsTest`), so a hot loop can compare them itself instead of calling the test per row.
 */
export function unitsRangeOf(test: OffsetTest): UnitsRangeTest | undefined {
  return unitsRangeTests.get(test);
}

/**
 * The codes and per-code verdicts behind `test` when it tests one dictionary chunk without
 * NULLs, so a hot loop can look codes up itself instead of calling the test per row.
 */
export function codeTestOf(test: OffsetTest): CodeTest | undefined {
  return codeTests.get(test);
}

/** Whether some, none or every value in [min, max] passes `operator value`. */
function rangeVerdict(
  operator: CompareOperator,
  value: number,
  min: number,
  max: number,
): 'none' | 'all' | 'some' {
  switch (operator) {
    case '=':
      if (value < min || value > max) return 'none';
      return min === value && max === value ? 'all' : 'some';
    case '!=':
      if (value < min || value > max) return 'all';
      return min === value && max === value ? 'none' : 'some';
    case '<':
      return min >= value ? 'none' : max < value ? 'all' : 'some';
    case '<=':
      return min > value ? 'none' : max <= value ? 'all' : 'some';
    case '>':
      return max <= value ? 'none' : min > value ? 'all' : 'some';
    case '>=':
      return max < value ? 'none' : min >= value ? 'all' : 'some';
  }
}

/**
 * The chunk's zone map (storage/zone-map.ts) decides a numeric comparison for all its rows
 * when the range allows: NEVER when no value passes, ALWAYS when every value does and the
 * chunk has no NULL. Otherwise `test`.
 */
function zoned(
  chunk: ColumnChunk,
  verdict: (min: number, max: number) => 'none' | 'all' | 'some',
  test: () => OffsetTest,
): OffsetTest {
  const zone = zoneMap(chunk);
  if (zone === null) return test();
  const decided = verdict(zone.min, zone.max);
  if (decided === 'none') return NEVER;
  if (decided === 'all' && chunk.nulls === null) return ALWAYS;
  return test();
}

/**
 * Specialises a value test to one column chunk's storage: numbers read straight from the typed
 * array, dictionary text tested once per distinct value, flat text decoded per row. NULL never
 * passes (SQL semantics).
 */
function valueTest(
  chunk: ColumnChunk,
  test: (x: Comparable) => boolean,
  numeric?: (x: number) => boolean,
): OffsetTest {
  const nulls = chunk.nulls;
  // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
  const notNull = (offset: number) =>
    nulls === null || ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) === 0;
  const read: OffsetTest = (offset) => {
    const value = readComparable(chunk, offset);
    return value !== null && test(value);
  };
  // Values kept exactly beside their double (BIGINT past 2^53) are compared as read.
  if (chunk.kind === 'float64' && chunk.exact !== null) return read;
  switch (chunk.kind) {
    case 'int32':
    case 'float64': {
      const values = chunk.values;
      const passes = numeric ?? (test as (x: number) => boolean);
      if (nulls === null) return (offset) => passes(values[offset] as number);
      return (offset) => notNull(offset) && passes(values[offset] as number);
    }
    case 'dict': {
      const matches = new Uint8Array(chunk.dictionary.length);
      let passing = 0;
      chunk.dictionary.forEach((entry, code) => {
        matches[code] = test(entry) ? 1 : 0;
        passing += matches[code] as number;
      });
      // The dictionary holds every value of the chunk (and maybe a few no row holds now).
      if (passing === 0) return NEVER;
      if (passing === matches.length && nulls === null) return ALWAYS;
      const codes = chunk.codes;
      if (nulls === null) {
        const byCode: OffsetTest = (offset) => matches[codes[offset] as number] === 1;
        codeTests.set(byCode, { codes, matches });
        return byCode;
      }
      return (offset) => notNull(offset) && matches[codes[offset] as number] === 1;
    }
    default:
      return read;
  }
}

/**
 * A comparison of a DECIMAL chunk stored as units with literals bound to units (`range`):
 * decided for the whole chunk by its zone map where it can, else integers compared straight
 * from the typed array. A value kept as text is compared exactly as a bigint, or, being no
 * finite number (PostgreSQL's NaN), by `fallback` as today's doubles are.
 */
function unitsTest(
  chunk: DecimalChunk,
  range: UnitRange,
  fallback: (x: Comparable) => boolean,
): OffsetTest {
  return zoned(
    chunk,
    (min, max) => rangeVerdictUnits(range, min, max),
    () => unitsRowTest(chunk, range, fallback),
  );
}

/** `unitsTest` for a chunk its zone map did not decide: a test per row. */
function unitsRowTest(
  chunk: DecimalChunk,
  range: UnitRange,
  fallback: (x: Comparable) => boolean,
): OffsetTest {
  const { low, high, negated } = range;
  const values = chunk.values;
  const nulls = chunk.nulls;
  const exact = chunk.exact;
  if (exact !== null) {
    const scale = chunk.scale;
    return (offset) => {
      if (isNullAt(chunk, offset)) return false;
      const text = exact.get(offset);
      if (text === undefined) {
        const units = values[offset] as number;
        return (units >= low && units <= high) !== negated;
      }
      const decimal = parseDecimal(text);
      if (decimal === null || decimal.scale > scale) return fallback(numericComparable(text));
      return inRangeExact(rescale(decimal.units, decimal.scale, scale), range);
    };
  }
  // `getBit` of storage/bitmap.ts written out: in a per-row scan the call costs ~10%.
  const notNull = (offset: number) =>
    nulls === null || ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) === 0;
  if (negated)
    return (offset) =>
      notNull(offset) && !((values[offset] as number) >= low && (values[offset] as number) <= high);
  if (nulls !== null)
    return (offset) =>
      notNull(offset) && (values[offset] as number) >= low && (values[offset] as number) <= high;
  let test: OffsetTest;
  if (high === Number.POSITIVE_INFINITY) test = (offset) => (values[offset] as number) >= low;
  else if (low === Number.NEGATIVE_INFINITY) test = (offset) => (values[offset] as number) <= high;
  else test = (offset) => (values[offset] as number) >= low && (values[offset] as number) <= high;
  unitsRangeTests.set(test, { values, low, high });
  return test;
}

/**
 * For each relation filter of a query, the join keys (`relation.targetColumns`) of the related
 * rows that pass its inner filter: computed once per query, so a row passes a relation filter
 * when its own key (`relation.localColumns`) is in the set, whatever the chain's depth.
 */
export type SemiJoinKeys = ReadonlyMap<PlanFilter, ReadonlySet<Key>>;

/** Compiles a plan filter for one table of one generation, chunk by chunk on demand. */
export class RowFilter {
  readonly #snapshot: TableSnapshot;
  readonly #filter: PlanFilter;
  readonly #semiJoins: SemiJoinKeys;
  readonly #byChunk: (OffsetTest | undefined)[] = [];
  readonly #ranges = new Map<PlanFilter, UnitRange | null>();

  constructor(snapshot: TableSnapshot, filter: PlanFilter, semiJoins: SemiJoinKeys) {
    this.#snapshot = snapshot;
    this.#filter = filter;
    this.#semiJoins = semiJoins;
  }

  /** The test for the rows of chunk `index`. */
  forChunk(index: number): OffsetTest {
    let test = this.#byChunk[index];
    if (!test) {
      test = this.#compile(this.#filter, index);
      this.#byChunk[index] = test;
    }
    return test;
  }

  /** A DECIMAL comparison's units range, worked out once for every chunk. */
  #range(filter: PlanFilter, make: () => UnitRange | null): UnitRange | null {
    let range = this.#ranges.get(filter);
    if (range === undefined) {
      range = make();
      this.#ranges.set(filter, range);
    }
    return range;
  }

  matches(rowId: number): boolean {
    return this.forChunk(rowId >>> CHUNK_BITS)(rowId & OFFSET_MASK);
  }

  #compile(filter: PlanFilter, chunkIndex: number): OffsetTest {
    const chunk = this.#snapshot.data.chunks[chunkIndex] as Chunk;
    switch (filter.kind) {
      case 'compare': {
        const { value, operator } = filter;
        if (value === null) return NEVER;
        const column = chunk.columns[filter.column.index] as ColumnChunk;
        if (column.kind === 'decimal' && filter.exact !== undefined) {
          const range = this.#range(filter, () =>
            compareRange(operator, filter.exact as string, column.scale),
          );
          if (range !== null) return unitsTest(column, range, operatorTest(operator, value));
        }
        const compiled = () =>
          valueTest(
            column,
            operatorTest(operator, value),
            typeof value === 'number' ? numberTest(operator, value) : undefined,
          );
        if (typeof value !== 'number' || column.kind === 'decimal') return compiled();
        return zoned(column, (min, max) => rangeVerdict(operator, value, min, max), compiled);
      }
      case 'like': {
        const test = filter.test;
        return valueTest(chunk.columns[filter.column.index] as ColumnChunk, (x) =>
          test(x as string),
        );
      }
      case 'in': {
        const values = filter.values;
        return valueTest(chunk.columns[filter.column.index] as ColumnChunk, (x) => values.has(x));
      }
      case 'json': {
        const { test, steps } = filter;
        const column = chunk.columns[filter.column.index] as ColumnChunk;
        const matches = (x: Comparable) => test(jsonValueAt(x as string, steps));
        if (!filter.nulls) return valueTest(column, matches);
        // IS NULL on a path: a NULL column has nothing at it either.
        return (offset) => {
          const value = readComparable(column, offset);
          return value === null || matches(value);
        };
      }
      case 'array': {
        const test = filter.test;
        return valueTest(chunk.columns[filter.column.index] as ColumnChunk, (x) =>
          test(x as string),
        );
      }
      case 'between': {
        const { low, high } = filter;
        if (low === null || high === null) return NEVER;
        const column = chunk.columns[filter.column.index] as ColumnChunk;
        const between = (x: Comparable) =>
          compareValues(x, low) >= 0 && compareValues(x, high) <= 0;
        const texts = filter.exact;
        if (column.kind === 'decimal' && texts !== undefined) {
          const range = this.#range(filter, () => betweenRange(texts[0], texts[1], column.scale));
          if (range !== null) return unitsTest(column, range, between);
        }
        const numeric = typeof low === 'number' && typeof high === 'number';
        const compiled = () =>
          valueTest(column, between, numeric ? (x) => x >= low && x <= high : undefined);
        if (!numeric || column.kind === 'decimal') return compiled();
        return zoned(
          column,
          (min, max) =>
            max < low || min > high ? 'none' : min >= low && max <= high ? 'all' : 'some',
          compiled,
        );
      }
      case 'isNull': {
        const column = chunk.columns[filter.column.index] as ColumnChunk;
        if (column.nulls === null) return filter.negated ? ALWAYS : NEVER;
        return filter.negated
          ? (offset) => !isNullAt(column, offset)
          : (offset) => isNullAt(column, offset);
      }
      case 'and': {
        const tests: OffsetTest[] = [];
        for (const operand of filter.operands) {
          const test = this.#compile(operand, chunkIndex);
          if (test === NEVER) return NEVER;
          if (test !== ALWAYS) tests.push(test);
        }
        if (tests.length === 0) return ALWAYS;
        if (tests.length === 1) return tests[0] as OffsetTest;
        return (offset) => {
          for (const test of tests) if (!test(offset)) return false;
          return true;
        };
      }
      case 'or': {
        const tests: OffsetTest[] = [];
        for (const operand of filter.operands) {
          const test = this.#compile(operand, chunkIndex);
          if (test === ALWAYS) return ALWAYS;
          if (test !== NEVER) tests.push(test);
        }
        if (tests.length === 0) return NEVER;
        if (tests.length === 1) return tests[0] as OffsetTest;
        return (offset) => {
          for (const test of tests) if (test(offset)) return true;
          return false;
        };
      }
      case 'related': {
        const keys = this.#semiJoins.get(filter);
        if (keys === undefined) throw new Error('relation filter used before its semi-join');
        if (keys.size === 0) return NEVER;
        const columns = chunk.columns;
        const local = filter.relation.localColumns;
        return (offset) => {
          const key = rowKey(columns, local, offset);
          return key !== null && keys.has(key);
        };
      }
    }
  }
}
