/**
 * The dashboard's one way to write a date and time: `2026-11-25 14:03:07`, in the browser's
 * local time. ISO-like rather than the locale's: it reads the same in every locale (8/11/26 is
 * August or November depending on who reads it), sorts as text, keeps table columns one
 * width, and matches the timestamps of the CLI and the logs. Relative times ("3 minutes ago")
 * only ever come beside it.
 */

const pad = (value: number) => String(value).padStart(2, '0');

function toDate(value: Date | string | number): Date {
  return value instanceof Date ? value : new Date(value);
}

/** `2026-11-25`, local. */
export function formatDate(value: Date | string | number): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return '–';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** `14:03:07`, local: log lines and readings within a day. */
export function formatTimeOfDay(value: Date | string | number): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return '–';
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** `2026-11-25 14:03:07`, local. */
export function formatDateTime(value: Date | string | number): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return '–';
  return `${formatDate(date)} ${formatTimeOfDay(date)}`;
}

/** A chart's time-axis tick: `14:30`, or the date (`2026-11-25`) at midnight. */
export function formatAxisTime(value: Date | string | number): string {
  const time = formatTimeOfDay(value).slice(0, 5);
  return time === '00:00' ? formatDate(value) : time;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago", "in 2 hours": said beside the exact time, never instead of it. */
export function formatRelative(value: Date | string | number, now = Date.now()): string {
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return '';
  const seconds = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 60) return relative.format(seconds, 'second');
  if (abs < 3600) return relative.format(Math.round(seconds / 60), 'minute');
  if (abs < 86400) return relative.format(Math.round(seconds / 3600), 'hour');
  return relative.format(Math.round(seconds / 86400), 'day');
}
