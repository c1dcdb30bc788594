/**
 * Orders names by UTF-16 code units: the same on every machine and for both backends, unlike
 * `localeCompare` or a server's collation.
 */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
