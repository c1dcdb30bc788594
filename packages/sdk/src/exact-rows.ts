/**
 * Turns the numbers `readJson` read into each field's representation (`column-numbers.ts`):
 * BIGINT columns and integer sums to `bigint`, DECIMAL columns and their aggregates to strings
 * of their exact digits, every other number to a `number`.
 */

import type { NumberRepresentation, SchemaNumbers, TableNumbers } from './column-numbers.ts';
import { NumberText, setOwn } from './json-reader.ts';

const INTEGER = /^-?\d+$/;

function toBigint(value: number | NumberText): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  // A BIGINT is written as an integer; anything else is left a number rather than refused.
  return INTEGER.test(value.text) ? BigInt(value.text) : Number(value.text);
}

function toDecimalText(value: number | NumberText): string {
  // A `number` from readJson prints as its JSON text: String gives the digits as sent.
  return typeof value === 'number' ? String(value) : value.text;
}

/**
 * `value` with each number in it (a PostgreSQL array's too, at any depth) converted, in place;
 * strings, booleans and nulls as they are.
 */
function mapNumbers(value: unknown, convert: (number: number | NumberText) => unknown): unknown {
  if (typeof value === 'number' || value instanceof NumberText) return convert(value);
  if (!Array.isArray(value)) return plainNumbers(value);
  const pending: unknown[][] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (let i = 0; i < next.length; i++) {
      const item: unknown = next[i];
      if (typeof item === 'number' || item instanceof NumberText) next[i] = convert(item);
      else if (Array.isArray(item)) pending.push(item);
      else if (item !== null && typeof item === 'object') plainNumbers(item);
    }
  }
  return value;
}

/** Every `NumberText` in `value` as the double JSON.parse would give; the rest unchanged. */
export function plainNumbers(value: unknown): unknown {
  if (value instanceof NumberText) return Number(value.text);
  if (value === null || typeof value !== 'object') return value;
  // An explicit stack: a hostile answer's nesting must not overflow the call stack.
  const pending: object[] = [value];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const item: unknown = next[i];
        if (item instanceof NumberText) next[i] = Number(item.text);
        else if (item !== null && typeof item === 'object') pending.push(item);
      }
      continue;
    }
    const record = next as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (item instanceof NumberText) setOwn(record, key, Number(item.text));
      else if (item !== null && typeof item === 'object') pending.push(item);
    }
  }
  return value;
}

function represent(value: unknown, representation: NumberRepresentation): unknown {
  if (representation === 'bigint') return mapNumbers(value, toBigint);
  if (representation === 'string') return mapNumbers(value, toDecimalText);
  return plainNumbers(value);
}

/**
 * Gives each field of `rows` (rows of `table`, as read) its representation, in place, relations
 * by their target table's columns. A field the schema does not know gets plain numbers;
 * the answer is false when there was one (the schema may be older than the instance).
 */
export function exactRows(rows: unknown[], table: string, schema: SchemaNumbers): boolean {
  let known = true;
  // Rows (an array, or one embedded row) and their table, on an explicit stack.
  const pending: { rows: unknown; table: TableNumbers | undefined }[] = [
    { rows, table: schema.table(table) },
  ];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const fields = next.table;
    const batch = Array.isArray(next.rows) ? next.rows : [next.rows];
    for (const row of batch) {
      if (row === null || typeof row !== 'object' || Array.isArray(row)) continue;
      const record = row as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        const value = record[key];
        const field = fields?.field(key);
        if (field === undefined) {
          known = false;
          setOwn(record, key, plainNumbers(value));
        } else if (typeof field === 'object') {
          if (value !== null) pending.push({ rows: value, table: schema.table(field.relation) });
        } else if (field !== 'number' || (value !== null && typeof value === 'object')) {
          setOwn(record, key, represent(value, field));
        }
      }
    }
  }
  return known;
}
