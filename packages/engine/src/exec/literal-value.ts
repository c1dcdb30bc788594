import type { Literal } from '@replix/query';
import { EngineError } from '../errors.ts';
import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { parseCivilDate, parseIsoTimestamp } from '../storage/civil-date.ts';
import { type Comparable, numericComparable } from '../storage/comparable.ts';

/** Why an array column cannot take part in a comparison, sort or grouping. */
export function arrayMisuse(name: string): string {
  return `Field "${name}" is an array: test it with CONTAINS (...), CONTAINED BY (...), OVERLAPS (...), CARDINALITY(${name}) or IS [NOT] NULL; it cannot be compared, sorted, grouped or aggregated.`;
}

function describe(literal: Literal): string {
  switch (literal.kind) {
    case 'string':
      return `'${literal.value}'`;
    case 'number':
      return literal.text;
    case 'boolean':
      return String(literal.value);
    case 'null':
      return 'NULL';
  }
}

/**
 * Converts a query literal into the comparison domain of `column`, or explains why it does
 * not fit. NULL converts to null (it then matches no row, as in SQL).
 */
export function literalValue(column: CompiledColumn, literal: Literal): Comparable | null {
  if (literal.kind === 'null') return null;
  const mismatch = (expected: string) =>
    new EngineError(
      'executor_error',
      `Field "${column.name}" holds ${expected}; ${describe(literal)} is not one.`,
    );
  switch (column.type) {
    case 'int':
    case 'bigint':
    case 'decimal':
      if (literal.kind !== 'number') throw mismatch('numbers');
      return numericComparable(literal.text);
    case 'float':
    case 'time':
      if (literal.kind !== 'number') throw mismatch('numbers');
      return Number(literal.text);
    case 'boolean':
      if (literal.kind !== 'boolean') throw mismatch('booleans (true or false)');
      return literal.value;
    case 'date': {
      const days = literal.kind === 'string' ? parseCivilDate(literal.value) : undefined;
      if (days === undefined) throw mismatch("dates ('YYYY-MM-DD')");
      return days;
    }
    case 'timestamp': {
      const micros = literal.kind === 'string' ? parseIsoTimestamp(literal.value) : undefined;
      if (micros === undefined) {
        throw mismatch("timestamps (ISO 8601, e.g. '2024-05-01T12:00:00Z')");
      }
      return micros;
    }
    case 'binary':
      if (literal.kind !== 'string') throw mismatch("binary values (lowercase hex, e.g. '0aff')");
      return literal.value.toLowerCase();
    case 'string':
    case 'json':
      if (literal.kind !== 'string') throw mismatch("text (quote the value: '…')");
      return literal.value;
    case 'array':
      // validate.ts refuses every comparison on an array before a literal is converted.
      throw new EngineError('executor_error', arrayMisuse(column.name));
  }
}
