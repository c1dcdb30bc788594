import { EngineError } from '../errors.ts';

/**
 * AFTER cursors name the last primary-key value of a page: base64url of `{"k": value}`.
 * They are opaque to clients; anything that does not decode to a key of the table's key type
 * is malformed.
 */
export function encodeCursor(key: number | string): string {
  return Buffer.from(JSON.stringify({ k: key })).toString('base64url');
}

export function decodeCursor(cursor: string, keyKind: 'number' | 'string'): number | string {
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
  if (keyKind === 'number' && typeof key === 'number' && Number.isFinite(key)) return key;
  if (keyKind === 'string' && typeof key === 'string') return key;
  throw malformed();
}
