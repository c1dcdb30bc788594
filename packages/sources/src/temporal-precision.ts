import type { SourceColumn } from '@replix/engine';

/** The canonical forms hold microseconds: finer source precision (SQL Server's 7) is cut. */
const MAX_DIGITS = 6;

/**
 * The fractional-second digits a `timestamp` or `time` column keeps, from its type text:
 * the `(n)` it declares (`datetime(6)`, `timestamp(3) with time zone`, `datetime2(7)`), capped
 * at 6, or `undeclared` (MySQL 0, PostgreSQL 6) without one. Undefined for other columns.
 */
export function temporalPrecision(
  type: SourceColumn['type'],
  sourceType: string,
  undeclared: number,
): number | undefined {
  if (type !== 'timestamp' && type !== 'time') return undefined;
  const declared = /\(\s*(\d+)\s*\)/.exec(sourceType)?.[1];
  return Math.min(declared === undefined ? undeclared : Number(declared), MAX_DIGITS);
}

/** `{ precision }` for a temporal column (see `temporalPrecision`), `{}` for any other. */
export function precisionField(
  type: SourceColumn['type'],
  sourceType: string,
  undeclared: number,
): { precision?: number } {
  const precision = temporalPrecision(type, sourceType, undeclared);
  return precision === undefined ? {} : { precision };
}
