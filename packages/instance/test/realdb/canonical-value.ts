/**
 * One canonical form for a value read from the source or from an instance, so the two compare
 * with `===` and nothing is rounded on the way: numbers as their exact digits, booleans as
 * `true`/`false`, timestamps as UTC with six fractional digits, binary as lowercase hex.
 */
export type Canonical = string | null | Canonical[] | { [key: string]: Canonical };

const ISO_TIMESTAMP =
  /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]00(?::?00)?)?$/;

/**
 * `2006-02-15T04:34:33Z`, `…33.000Z` and `…33.000000Z` are the same instant: the fraction is
 * padded to microseconds, never cut, so a value served with fewer digits than the source has
 * differs, and one with more than six keeps them and differs too.
 */
export function canonicalTimestamp(text: string): string {
  const match = ISO_TIMESTAMP.exec(text);
  if (!match) return `unparsed timestamp ${text}`;
  const [, date, time, fraction = ''] = match;
  return `${date}T${time}.${fraction.padEnd(6, '0')}Z`;
}

/** A JSON text with every number kept as its source digits (`12.50` stays `12.50`). */
export function parseJsonKeepingDigits(text: string): unknown {
  const keepDigits = (_key: string, value: unknown, context?: { source?: string }): unknown =>
    typeof value === 'number' ? { digits: context?.source ?? String(value) } : value;
  return JSON.parse(text, keepDigits);
}

function isDigits(value: unknown): value is { digits: string } {
  return typeof value === 'object' && value !== null && 'digits' in value;
}

/**
 * A parsed served value in canonical form. `timestampKeys` names the object keys whose string
 * values are timestamps (served columns of type `timestamp`).
 */
export function canonicalServed(value: unknown, timestampKeys: ReadonlySet<string>): Canonical {
  if (value === null || value === undefined) return null;
  if (isDigits(value)) return value.digits;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((item) => canonicalServed(item, timestampKeys));
  if (typeof value === 'object') {
    const out: { [key: string]: Canonical } = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] =
        typeof item === 'string' && timestampKeys.has(key)
          ? canonicalTimestamp(item)
          : canonicalServed(item, timestampKeys);
    }
    return out;
  }
  return String(value);
}

/** A value from a source driver in canonical form (the SQL has cast most columns to text). */
export function canonicalSource(value: unknown): Canonical {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(canonicalSource);
  if (typeof value === 'object') {
    const out: { [key: string]: Canonical } = {};
    for (const [key, item] of Object.entries(value)) out[key] = canonicalSource(item);
    return out;
  }
  return String(value);
}
