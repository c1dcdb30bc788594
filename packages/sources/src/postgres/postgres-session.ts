import type { CustomTypesConfig } from 'pg';

const keepText = (value: string): string => value;

/**
 * Type parsers that leave every value as the server's text: node-postgres would otherwise turn
 * timestamps into local-time `Date`s, parse JSON and arrays, and round nothing but still decide
 * for us. The column converters in `postgres-types.ts` take it from the text.
 */
export const TEXT_TYPES: CustomTypesConfig = { getTypeParser: () => keepText };

/**
 * Settings that pin down the text form of values, whatever the server's or role's defaults:
 * timestamps with time zone print in UTC, dates as ISO `YYYY-MM-DD`, intervals as ISO 8601
 * durations (`P1Y2M3DT4H5M6S`), floats with every digit needed to read them back exactly, bytea
 * as `\x` hex. The snapshot sets them on its session; the change stream passes them at
 * connection start-up, because its walsender prints the values it streams with its own
 * session's settings. One list for both keeps snapshot and stream values identical.
 */
const VALUE_TEXT_SETTINGS: readonly (readonly [name: string, value: string])[] = [
  ['TimeZone', 'UTC'],
  ['DateStyle', 'ISO'],
  ['IntervalStyle', 'iso_8601'],
  ['extra_float_digits', '3'],
  ['bytea_output', 'hex'],
];

/**
 * The snapshot session's settings: the value text settings, and no idle-in-transaction timeout,
 * because the snapshot transaction stays open while the engine works through its batches.
 */
export const SNAPSHOT_SESSION_SQL = [
  ...VALUE_TEXT_SETTINGS.map(([name, value]) => `SET ${name} = '${value}'`),
  'SET idle_in_transaction_session_timeout = 0',
].join('; ');

/** The value text settings as a start-up `options` string (`-c name=value …`). */
export const VALUE_TEXT_STARTUP_OPTIONS = VALUE_TEXT_SETTINGS.map(
  ([name, value]) => `-c ${name}=${value}`,
).join(' ');
