import type { CompareOperator } from '@replix/query';
import type { ColumnChunk } from '../storage/column-chunk.ts';
import { type Comparable, isNullAt, readComparable } from '../storage/column-reader.ts';
import type { Generation, TableSnapshot } from '../storage/generation.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';
import { compareCodePoints } from './code-point-compare.ts';
import type { PlanFilter } from './plan.ts';
import { relatedRows } from './relations.ts';

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

const NEVER: OffsetTest = () => false;

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
      chunk.dictionary.forEach((entry, code) => {
        matches[code] = test(entry) ? 1 : 0;
      });
      const codes = chunk.codes;
      if (nulls === null) return (offset) => matches[codes[offset] as number] === 1;
      return (offset) => notNull(offset) && matches[codes[offset] as number] === 1;
    }
    default:
      return read;
  }
}

/** Compiles a plan filter for one table of one generation, chunk by chunk on demand. */
export class RowFilter {
  readonly #generation: Generation;
  readonly #snapshot: TableSnapshot;
  readonly #filter: PlanFilter;
  readonly #byChunk: (OffsetTest | undefined)[] = [];

  constructor(generation: Generation, snapshot: TableSnapshot, filter: PlanFilter) {
    this.#generation = generation;
    this.#snapshot = snapshot;
    this.#filter = filter;
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
        const numeric = typeof value === 'number' ? numberTest(operator, value) : undefined;
        return valueTest(column, operatorTest(operator, value), numeric);
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
      case 'between': {
        const { low, high } = filter;
        if (low === null || high === null) return NEVER;
        return valueTest(
          chunk.columns[filter.column.index] as ColumnChunk,
          (x) => compareValues(x, low) >= 0 && compareValues(x, high) <= 0,
          typeof low === 'number' && typeof high === 'number'
            ? (x) => x >= low && x <= high
            : undefined,
        );
      }
      case 'isNull': {
        const column = chunk.columns[filter.column.index] as ColumnChunk;
        if (column.nulls === null) return filter.negated ? () => true : NEVER;
        return filter.negated
          ? (offset) => !isNullAt(column, offset)
          : (offset) => isNullAt(column, offset);
      }
      case 'and': {
        const tests = filter.operands.map((operand) => this.#compile(operand, chunkIndex));
        return (offset) => {
          for (const test of tests) if (!test(offset)) return false;
          return true;
        };
      }
      case 'or': {
        const tests = filter.operands.map((operand) => this.#compile(operand, chunkIndex));
        return (offset) => {
          for (const test of tests) if (test(offset)) return true;
          return false;
        };
      }
      case 'related': {
        const target = this.#generation.table(filter.target.name);
        const inner = new RowFilter(this.#generation, target, filter.filter);
        const base = chunkIndex << CHUNK_BITS;
        return (offset) => {
          for (const related of relatedRows(
            this.#generation,
            this.#snapshot,
            filter.relation,
            base + offset,
          )) {
            if (inner.matches(related)) return true;
          }
          return false;
        };
      }
    }
  }
}
