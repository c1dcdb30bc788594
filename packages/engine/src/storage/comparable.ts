import { Buffer } from 'node:buffer';
import type { ColumnType } from '../source-schema.ts';
import { parseCivilDate } from './civil-date.ts';

/**
 * A stored value in the engine's comparison domain: what filters, sorts and keys compare.
 * Numbers are doubles, except integers a double cannot hold exactly (BIGINT past 2^53), which
 * are bigints (see `numericComparable`).
 */
export type Comparable = number | bigint | string | boolean;

const INTEGER_TEXT = /^-?\d+$/;

/**
 * The comparison value of a number written as `text`: its double, or, for an integer that no
 * double holds exactly (BIGINT past 2^53), a bigint. Each value has exactly one form, so `===`,
 * sets and index keys stay exact, and `<` compares bigints with doubles exactly.
 */
export function numericComparable(text: string): number | bigint {
  const value = Number(text);
  if (Number.isSafeInteger(value) || !INTEGER_TEXT.test(text)) return value;
  const exact = BigInt(text);
  return Number.isFinite(value) && BigInt(value) === exact ? value : exact;
}

/** Maps a canonical source value (as connectors deliver it) into the comparison domain. */
export function canonicalToComparable(type: ColumnType, value: unknown): Comparable | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'bigint':
    case 'decimal':
      return numericComparable(String(value));
    case 'int':
    case 'float':
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
    case 'array':
      return String(value);
  }
}
