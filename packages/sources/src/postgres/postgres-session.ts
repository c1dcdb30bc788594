import type { CustomTypesConfig } from 'pg';

const keepText = (value: string): string => value;

/**
 * Type parsers that leave every value as the server's text: node-postgres would otherwise turn
 * timestamps into local-time `Date`s, parse JSON and arrays, and round nothing but still decide
 * for us. The column converters in `postgres-types.ts` take it from the text.
 */
export const TEXT_TYPES: CustomTypesConfig = { getTypeParser: () => keepText };

/**
 * Session settings that pin down the text form of values, whatever the server's or role's
 * defaults: timestamps with time zone print in UTC, dates as ISO `YYYY-MM-DD`, intervals as
 * ISO 8601 durations (`P1Y2M3DT4H5M6S`), floats with every digit needed to read them back
 * exactly, bytea as `\x` hex. The snapshot transaction stays open while the engine works through
 * its batches, so the idle-in-transaction timeout must not end it.
 */
export const SNAPSHOT_SESSION_SQL = [
  "SET TimeZone = 'UTC'",
  "SET DateStyle = 'ISO'",
  "SET IntervalStyle = 'iso_8601'",
  'SET extra_float_digits = 3',
  "SET bytea_output = 'hex'",
  'SET idle_in_transaction_session_timeout = 0',
].join('; ');
