/**
 * The declared scale of a `decimal(p,s)` / `numeric(p,s)` type text, or undefined when the type
 * declares none (PostgreSQL's unconstrained `numeric`). PostgreSQL 15 allows a negative scale.
 */
export function decimalScale(sourceType: string): number | undefined {
  const match = /\(\s*\d+\s*,\s*(-?\d+)\s*\)/.exec(sourceType);
  if (match) return Number(match[1]);
  // MySQL prints `decimal(10,0)` for a bare DECIMAL; a lone precision means scale 0 in SQL.
  return /\(\s*\d+\s*\)/.test(sourceType) ? 0 : undefined;
}
