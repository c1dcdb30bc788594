import { daysFromCivil, epochMicros } from '@replix/engine/storage';
import { SourceError } from './errors.ts';

/**
 * Parsers for the text both backends send for temporal values once the session time zone is UTC.
 * They are hand-written over char codes because they run once per value of every temporal
 * column of every snapshot: no regular expressions, no `Date` objects.
 */

const SECONDS_PER_DAY = 86_400;
const ZERO = 48;

/** The number written in `text[start, end)`, or NaN if that is not all digits (or empty). */
function digitsAt(text: string, start: number, end: number): number {
  if (end <= start || end > text.length) return Number.NaN;
  let value = 0;
  for (let i = start; i < end; i++) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/** Index of the first non-digit at or after `start`. */
function digitsEnd(text: string, start: number): number {
  let i = start;
  while (i < text.length) {
    const digit = text.charCodeAt(i) - ZERO;
    if (digit < 0 || digit > 9) break;
    i++;
  }
  return i;
}

function invalid(kind: string, text: string): SourceError {
  return new SourceError(
    'source_value_invalid',
    `Unexpected ${kind} text from the source: "${text}".`,
  );
}

/**
 * Seconds east of UTC written at `text[start…]` as `Z`, `±HH`, `±HH:MM` or `±HH:MM:SS`
 * (PostgreSQL prints the shortest exact form). Returns NaN for trailing text of any other shape.
 */
function offsetAt(text: string, start: number): { seconds: number; end: number } {
  if (start >= text.length) return { seconds: 0, end: start };
  const sign = text[start];
  if (sign === 'Z') return { seconds: 0, end: start + 1 };
  if (sign !== '+' && sign !== '-') return { seconds: 0, end: start };
  let seconds = digitsAt(text, start + 1, start + 3) * 3600;
  let i = start + 3;
  if (text[i] === ':') {
    seconds += digitsAt(text, i + 1, i + 3) * 60;
    i += 3;
    if (text[i] === ':') {
      seconds += digitsAt(text, i + 1, i + 3);
      i += 3;
    }
  }
  return { seconds: sign === '-' ? -seconds : seconds, end: i };
}

/** Microseconds in the fraction digits `text[start, end)`, cut after six digits (never rounded up). */
function microsOf(text: string, start: number, end: number): number {
  const digits = Math.min(end - start, 6);
  return digitsAt(text, start, start + digits) * 10 ** (6 - digits);
}

/**
 * `YYYY-MM-DD[ T]HH:MM:SS[.ffffff][offset][ BC]` to epoch microseconds UTC. Text without an
 * offset is taken as UTC: the connectors set the session time zone to UTC, so MySQL's TIMESTAMP
 * and PostgreSQL's timestamptz print in UTC, and DATETIME / timestamp (no zone) are read as UTC
 * wall clocks. Digits past the sixth fractional one are cut. Returns null for values that name
 * no instant: MySQL zero dates (`0000-00-00 …`, and any date with a zero month or day) and
 * PostgreSQL's `infinity` / `-infinity`.
 */
export function parseTimestampText(text: string): number | null {
  const fixed = fixedDateTime(text);
  if (!Number.isNaN(fixed)) return fixed;
  if (text === 'infinity' || text === '-infinity') return null;
  const yearEnd = text.indexOf('-', 1);
  if (yearEnd < 0) throw invalid('timestamp', text);
  const year = digitsAt(text, 0, yearEnd);
  const month = digitsAt(text, yearEnd + 1, yearEnd + 3);
  const day = digitsAt(text, yearEnd + 4, yearEnd + 6);
  if (month === 0 || day === 0) return null;
  const separator = text[yearEnd + 6];
  const t = yearEnd + 7;
  const hours = digitsAt(text, t, t + 2);
  const minutes = digitsAt(text, t + 3, t + 5);
  const seconds = digitsAt(text, t + 6, t + 8);
  let i = t + 8;
  let micros = 0;
  if (text[i] === '.') {
    const fractionEnd = digitsEnd(text, i + 1);
    micros = microsOf(text, i + 1, fractionEnd);
    i = fractionEnd;
  }
  const offset = offsetAt(text, i);
  i = offset.end;
  let astronomicalYear = year;
  if (text.startsWith(' BC', i)) {
    astronomicalYear = 1 - year; // 1 BC is year 0
    i += 3;
  }
  const total = epochMicros(
    daysFromCivil(astronomicalYear, month, day),
    hours * 3600 + minutes * 60 + seconds - offset.seconds,
    micros,
  );
  if (
    i !== text.length ||
    (separator !== ' ' && separator !== 'T') ||
    text[t + 2] !== ':' ||
    text[t + 5] !== ':' ||
    Number.isNaN(total)
  ) {
    throw invalid('timestamp', text);
  }
  return total;
}

const DASH = 45;
const SPACE = 32;
const COLON = 58;
const DOT = 46;

/**
 * `YYYY-MM-DD HH:MM:SS[.f…]` (up to six fraction digits, no offset), read at fixed positions: the
 * shape MySQL prints every DATETIME and TIMESTAMP in, so a snapshot load reads most of its
 * temporal values here. NaN for any other shape, a zero month or day included: the general
 * parser decides those. The same arithmetic as the general parser, so the same double.
 */
function fixedDateTime(text: string): number {
  const length = text.length;
  if (length !== 19 && (length < 21 || length > 26)) return Number.NaN;
  if (
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    text.charCodeAt(10) !== SPACE ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON ||
    (length > 19 && text.charCodeAt(19) !== DOT)
  ) {
    return Number.NaN;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 7);
  const day = digitsAt(text, 8, 10);
  if (month === 0 || day === 0) return Number.NaN;
  const hours = digitsAt(text, 11, 13);
  const minutes = digitsAt(text, 14, 16);
  const seconds = digitsAt(text, 17, 19);
  const micros = length > 19 ? microsOf(text, 20, length) : 0;
  return epochMicros(
    daysFromCivil(year, month, day),
    hours * 3600 + minutes * 60 + seconds,
    micros,
  );
}

/**
 * A `YYYY-MM-DD` date as is, or null for dates the canonical form cannot hold: MySQL zero dates
 * (a zero month or day, e.g. `0000-00-00`) and PostgreSQL's `infinity`, `-infinity` and BC dates.
 */
export function parseDateText(text: string): string | null {
  if (text.length === 10) {
    const zeroMonth = text.charCodeAt(5) === ZERO && text.charCodeAt(6) === ZERO;
    const zeroDay = text.charCodeAt(8) === ZERO && text.charCodeAt(9) === ZERO;
    return zeroMonth || zeroDay ? null : text;
  }
  if (text.endsWith('infinity') || text.endsWith(' BC')) return null;
  return text; // a year past 9999 (PostgreSQL): still year-month-day, just longer
}

/**
 * Seconds with a microsecond fraction, as the one double nearest to `micros / 10^6`: the value
 * `Number()` gives for the decimal text, so a query literal `45296.000001` equals it exactly.
 */
export function secondsFromMicros(micros: number): number {
  return micros / 1_000_000;
}

/**
 * `[-]H…H:MM:SS[.ffffff][offset]` to seconds with a microsecond fraction (digits past the sixth
 * are cut). MySQL TIME is a duration: it may be negative or beyond 24 hours (`-838:59:59` …
 * `838:59:59`). With an offset (PostgreSQL timetz) the time of day is converted to UTC and
 * normalised into [0, 86400).
 */
export function parseTimeText(text: string): number {
  const negative = text[0] === '-';
  const hoursStart = negative ? 1 : 0;
  const hoursEnd = text.indexOf(':', hoursStart);
  const hours = digitsAt(text, hoursStart, hoursEnd);
  const minutes = digitsAt(text, hoursEnd + 1, hoursEnd + 3);
  const wholeSeconds = digitsAt(text, hoursEnd + 4, hoursEnd + 6);
  let i = hoursEnd + 6;
  let fraction = 0;
  if (text[i] === '.') {
    const fractionEnd = digitsEnd(text, i + 1);
    fraction = microsOf(text, i + 1, fractionEnd);
    i = fractionEnd;
  }
  const offset = offsetAt(text, i);
  const magnitude = (hours * 3600 + minutes * 60 + wholeSeconds) * 1_000_000 + fraction;
  if (offset.end !== text.length || text[hoursEnd + 3] !== ':' || Number.isNaN(magnitude)) {
    throw invalid('time', text);
  }
  const signed = negative ? -magnitude : magnitude;
  if (offset.end === i) return secondsFromMicros(signed);
  const microsPerDay = SECONDS_PER_DAY * 1_000_000;
  const utc = signed - offset.seconds * 1_000_000;
  return secondsFromMicros(((utc % microsPerDay) + microsPerDay) % microsPerDay);
}
