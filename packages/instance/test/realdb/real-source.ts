import type { Canonical } from './canonical-value.ts';

/** A base table of the source: its columns in order and its primary key. */
export interface SourceTable {
  readonly name: string;
  readonly columns: readonly SourceColumnType[];
  readonly primaryKey: readonly string[];
}

export interface SourceColumnType {
  readonly name: string;
  /** The engine's own type name (`information_schema` / `format_type`). */
  readonly type: string;
}

export type CanonicalRow = Record<string, Canonical>;

/**
 * The sample database read straight from the source with SQL, independently of Replix, every
 * value in canonical form (see `canonical-value.ts`).
 */
export interface RealSource {
  /** Base tables (for PostgreSQL, partitioned parents but not their partitions). */
  tables(): Promise<SourceTable[]>;
  /** A view (or table) by name, its rows keyed by `key`, which must be unique in it. */
  relation(name: string, key: readonly string[]): Promise<SourceTable>;
  /** Every row of `table`, keyed by its primary-key values. */
  tableRows(table: SourceTable): Promise<Map<string, CanonicalRow>>;
  /** Any query, each value canonical (write the SQL so values arrive as text). */
  rows(sql: string): Promise<CanonicalRow[]>;
  /** Runs statements; resolves when committed. */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** The key a row is filed under: its primary-key values, in key order. */
export function rowKey(row: CanonicalRow, primaryKey: readonly string[]): string {
  return JSON.stringify(primaryKey.map((column) => row[column] ?? null));
}
