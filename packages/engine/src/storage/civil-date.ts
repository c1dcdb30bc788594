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

/** `YYYY-MM-DD` for a day number; years outside 0..9999 keep a sign and more digits. */
export function civilFromDays(days: number): string {
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
  const match = DATE_PATTERN.exec(text);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  const days = daysFromCivil(year, month, day);
  return civilFromDays(days).endsWith(`${match[2]}-${match[3]}`) ? days : undefined;
}
