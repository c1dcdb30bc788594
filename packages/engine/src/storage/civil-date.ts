/**
 * Dates as whole days since 1970-01-01 in the proleptic Gregorian calendar, without Date's
 * two-digit-year and time-zone traps (after Howard Hinnant's `days_from_civil`).
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** Day numbers of 1900-01-01 and 2100-01-01: the days whose text is cached once made. */
const CACHED_FIRST_DAY = -25567;
const CACHED_DAYS = 73049;
const dayTexts: (string | undefined)[] = new Array(CACHED_DAYS);

/** `YYYY-MM-DD` for a day number; years outside 0..9999 keep a sign and more digits. */
export function civilFromDays(days: number): string {
  const slot = days - CACHED_FIRST_DAY;
  // Rows repeat the same few thousand days: each one's text is made once.
  if (slot >= 0 && slot < CACHED_DAYS && Number.isInteger(slot)) {
    let text = dayTexts[slot];
    if (text === undefined) {
      text = dayText(days);
      dayTexts[slot] = text;
    }
    return text;
  }
  return dayText(days);
}

function dayText(days: number): string {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36524) -
      Math.floor(dayOfEra / 146096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const yyyy = year >= 0 && year <= 9999 ? String(year).padStart(4, '0') : String(year);
  return `${yyyy}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
}

const DATE_PATTERN = /^(-?\d{1,6})-(\d{2})-(\d{2})$/;

/** Parses `YYYY-MM-DD` to a day number; undefined for anything else or an impossible date. */
export function parseCivilDate(text: string): number | undefined {
  if (text.length === 10 && text.charCodeAt(0) !== DASH) return parseTenCharDate(text);
  const match = DATE_PATTERN.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const days = daysFromCivil(year, month, day);
  return civilFromDays(days).endsWith(`${match[2]}-${match[3]}`) ? days : undefined;
}

const MICROS_PER_DAY = 86_400_000_000;

/** `00`..`99` and `000`..`999`: a timestamp's fields without a padStart each. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/**
 * Epoch microseconds of a UTC day number, second of that day and microsecond. Every path that
 * builds a timestamp (source text and binlog bytes in `@replix/sources`, query literals here)
 * uses this one function, so equal instants give the identical double; it is exact within
 * ±2^53 µs (years 1685…2255) and the nearest double beyond.
 */
export function epochMicros(days: number, secondOfDay: number, micros: number): number {
  return (days * 86_400 + secondOfDay) * 1_000_000 + micros;
}

/**
 * ISO 8601 UTC text of epoch microseconds with `fractionDigits` (3: milliseconds, cut; 6:
 * microseconds), e.g. `2022-09-10T16:46:03.905795Z`. Years outside 0..9999 keep their sign.
 */
export function timestampText(micros: number, fractionDigits: 3 | 6): string {
  const days = Math.floor(micros / MICROS_PER_DAY);
  // Exact: both terms are integers and the difference is below 2^37.
  const ofDay = micros - days * MICROS_PER_DAY;
  const seconds = Math.floor(ofDay / 1_000_000);
  const fraction = ofDay - seconds * 1_000_000;
  const clock = `${TWO_DIGITS[Math.floor(seconds / 3600)]}:${TWO_DIGITS[Math.floor(seconds / 60) % 60]}:${TWO_DIGITS[seconds % 60]}`;
  const digits =
    fractionDigits === 6 ? pad(fraction, 6) : THREE_DIGITS[Math.floor(fraction / 1000)];
  return `${civilFromDays(days)}T${clock}.${digits}Z`;
}

/** How many fraction digits a timestamp column prints (see `ColumnType`). */
export function timestampDigits(precision: number | undefined, micros: number): 3 | 6 {
  if (precision !== undefined) return precision > 3 ? 6 : 3;
  return micros % 1000 === 0 ? 3 : 6;
}

const ISO_TIMESTAMP =
  /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)? ?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/**
 * An ISO 8601 date or date-time (`2024-05-01`, `2024-05-01T12:00`, `2024-05-01 12:00:00.123456`,
 * with `Z` or `±HH[:MM]`; UTC without one) to epoch microseconds. Digits past the sixth
 * fractional one are cut, as the connectors cut them. Undefined for other shapes and impossible
 * dates or times.
 */
export function parseIsoTimestamp(text: string): number | undefined {
  const match = ISO_TIMESTAMP.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hh, mm, ss, fraction, zone] = match;
  const days = parseCivilDate(`${year?.replace('+', '')}-${month}-${day}`);
  const hours = Number(hh ?? 0);
  const minutes = Number(mm ?? 0);
  const seconds = Number(ss ?? 0);
  if (days === undefined || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  const micros = fraction ? Number(fraction.slice(0, 6).padEnd(6, '0')) : 0;
  return epochMicros(days, hours * 3600 + minutes * 60 + seconds - zoneSeconds(zone), micros);
}

/** Seconds east of UTC of `Z`, `±HH`, `±HHMM` or `±HH:MM` (none: UTC). */
function zoneSeconds(zone: string | undefined): number {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const seconds = Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2) || 0) * 60;
  return zone[0] === '-' ? -seconds : seconds;
}

const ZERO = 48;
const DASH = 45;
/** Days in each month of a common year; February gains one in a leap year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The digit at `i` of `text`, or NaN. */
function digitAt(text: string, i: number): number {
  const digit = text.charCodeAt(i) - ZERO;
  return digit >= 0 && digit <= 9 ? digit : Number.NaN;
}

/**
 * `YYYY-MM-DD` with a four-digit year, by char codes: every date of a snapshot load has this
 * shape, and the regular expression and the round trip through the text cost more than the rest.
 */
function parseTenCharDate(text: string): number | undefined {
  if (text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return undefined;
  const year =
    digitAt(text, 0) * 1000 + digitAt(text, 1) * 100 + digitAt(text, 2) * 10 + digitAt(text, 3);
  const month = digitAt(text, 5) * 10 + digitAt(text, 6);
  const day = digitAt(text, 8) * 10 + digitAt(text, 9);
  if (!(year >= 0 && month >= 1 && month <= 12 && day >= 1)) return undefined; // NaN fails too
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const last = month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] as number);
  return day <= last ? daysFromCivil(year, month, day) : undefined;
}
