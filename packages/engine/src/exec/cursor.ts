import { Buffer } from 'node:buffer';
import { EngineError } from '../errors.ts';
import { numericComparable } from '../storage/comparable.ts';

/**
 * AFTER cursors name the last primary-key value of a page: base64url of `{"k": value}`, an
 * integer past 2^53 as `{"k": "digits", "n": true}`. They are opaque to clients; anything that
 * does not decode to a key of the table's key type is malformed.
 */
export function encodeCursor(key: number | bigint | string): string {
  const json = typeof key === 'bigint' ? { k: String(key), n: true } : { k: key };
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

export function decodeCursor(
  cursor: string,
  keyKind: 'number' | 'string',
): number | bigint | string {
  const malformed = () =>
    new EngineError(
      'executor_error',
      'Malformed AFTER cursor: pass the next_cursor of the previous page, or an empty string for the first page.',
    );
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const key = (decoded as { k?: unknown } | null)?.k;
  const big = (decoded as { n?: unknown } | null)?.n === true;
  if (keyKind === 'number' && typeof key === 'number' && Number.isFinite(key)) return key;
  if (keyKind === 'number' && big && typeof key === 'string' && /^-?\d+$/.test(key)) {
    return numericComparable(key);
  }
  if (keyKind === 'string' && typeof key === 'string' && !big) return key;
  throw malformed();
}
