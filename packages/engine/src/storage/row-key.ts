import type { ColumnChunk } from './column-chunk.ts';
import { readComparable } from './column-reader.ts';
import type { Comparable } from './comparable.ts';
import type { Key } from './key-index.ts';

/** Joins the parts of a composite key; a separator no text value contains in practice. */
const SEPARATOR = '\u0000';

/** The index key of a row over `columns`; null when any of them is NULL (no key, no match). */
export function rowKey(
  columns: readonly ColumnChunk[],
  keyColumns: readonly number[],
  offset: number,
): Key | null {
  if (keyColumns.length === 1)
    return readComparable(columns[keyColumns[0] as number] as ColumnChunk, offset);
  let key = '';
  for (let i = 0; i < keyColumns.length; i++) {
    const value = readComparable(columns[keyColumns[i] as number] as ColumnChunk, offset);
    if (value === null) return null;
    key += i === 0 ? String(value) : SEPARATOR + String(value);
  }
  return key;
}

/** The index key for given values (in the comparison domain), matching `rowKey`. */
export function valuesKey(values: readonly (Comparable | null)[]): Key | null {
  if (values.length === 1) return values[0] ?? null;
  if (values.some((value) => value === null)) return null;
  return values.map(String).join(SEPARATOR);
}
