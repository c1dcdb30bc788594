import type { ColumnType } from '../source-schema.ts';
import { parseCivilDate } from './civil-date.ts';
import type { Comparable } from './column-reader.ts';

/** Maps a canonical source value (as connectors deliver it) into the comparison domain. */
export function canonicalToComparable(type: ColumnType, value: unknown): Comparable | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'int':
    case 'bigint':
    case 'float':
    case 'decimal':
    case 'timestamp':
    case 'time':
      return Number(value);
    case 'date':
      return parseCivilDate(String(value)) ?? null;
    case 'boolean':
      return Boolean(value);
    case 'binary':
      return value instanceof Uint8Array ? Buffer.from(value).toString('hex') : String(value);
    case 'string':
    case 'json':
      return String(value);
  }
}
