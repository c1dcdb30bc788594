/**
 * What a source connector reports about a source database, in engine terms. Connectors map
 * their engine's column types to a `ColumnType` and deliver every value in that type's
 * canonical JavaScript form (see `ColumnType`), so the engine never parses engine formats.
 */

/**
 * The engine's column types and the canonical value a connector delivers for each (null for
 * SQL NULL, whatever the type):
 *
 * | type        | source types                                     | value delivered            | JSON   |
 * |-------------|--------------------------------------------------|----------------------------|--------|
 * | `int`       | TINYINT..INT, SMALLINT, INTEGER, MEDIUMINT; any integer type whose whole range fits in a double exactly (INT UNSIGNED) | number | number |
 * | `bigint`    | BIGINT, INT8, BIGINT UNSIGNED                    | string of decimal digits   | number (every digit) |
 * | `float`     | FLOAT, DOUBLE, REAL                              | number                     | number |
 * | `decimal`   | DECIMAL, NUMERIC                                 | string, the exact decimal  | number (every digit) |
 * | `boolean`   | BOOLEAN, BIT(1), TINYINT(1)                      | boolean                    | boolean |
 * | `string`    | CHAR, VARCHAR, TEXT, ENUM, SET, UUID, INET, CIDR, MACADDR, INTERVAL, other text-like | string | string |
 * | `json`      | JSON, JSONB                                      | string, the JSON text      | string |
 * | `date`      | DATE                                             | string `YYYY-MM-DD`        | string |
 * | `timestamp` | DATETIME, TIMESTAMP, TIMESTAMPTZ                 | number, epoch microseconds UTC | string, ISO 8601 UTC: 3 fraction digits for precision 0..3, 6 for 4..6 |
 * | `time`      | TIME, TIMETZ                                     | number, seconds with a µs fraction | number, up to 6 decimals |
 * | `binary`    | BINARY, VARBINARY, BLOB, BYTEA                   | Uint8Array                 | string, lowercase hex |
 * | `array`     | PostgreSQL arrays (`text[]`, `integer[][]`)     | string, the JSON array text | array, written as is |
 *
 * An `array` column's elements follow the table by its `elementType` (a bigint element is a
 * JSON number with every digit, a bytea element a hex string, a NULL element null; a
 * multidimensional array nests). The connector writes that JSON text; the engine stores it
 * and writes it out unchanged, and compares arrays only with IS NULL / IS NOT NULL.
 *
 * A `timestamp` is exact to the microsecond within ±2^53 µs of 1970 (years 1685…2255) and the
 * nearest double outside; finer source ticks (SQL Server's 100 ns) are cut to the microsecond.
 * Without a known `precision` it prints 3 digits, or 6 when it has a sub-millisecond part.
 */
export type ColumnType =
  | 'int'
  | 'bigint'
  | 'float'
  | 'decimal'
  | 'boolean'
  | 'string'
  | 'json'
  | 'date'
  | 'timestamp'
  | 'time'
  | 'binary'
  | 'array';

/** The types an array's elements may have: any column type but an array. */
export type ElementType = Exclude<ColumnType, 'array'>;

export interface SourceColumn {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  /** The column's type as the source names it, e.g. `varchar(20)`, `numeric(12,2)`. */
  readonly sourceType: string;
  /** Digits after the point for `decimal` columns with a declared scale. */
  readonly scale?: number;
  /**
   * Fractional-second digits (0…6) a `timestamp` or `time` column keeps: MySQL's fsp,
   * PostgreSQL's precision (6 when undeclared), SQL Server's scale capped at 6. It sets how many
   * digits a timestamp prints (see `ColumnType`); absent when the connector does not know it.
   */
  readonly precision?: number;
  /** The type of an `array` column's elements (absent for other types). */
  readonly elementType?: ElementType;
}

export interface SourceForeignKey {
  /** The constraint's name in the source. */
  readonly name: string;
  /** Columns of the referencing table, in constraint order. */
  readonly columns: readonly string[];
  readonly referencedTable: string;
  /** Columns of the referenced table, matching `columns` one to one. */
  readonly referencedColumns: readonly string[];
  /** What the source does to referencing rows when the referenced row is deleted. */
  readonly onDelete?: ForeignKeyRule;
  /** What the source does to referencing rows when the referenced columns change. */
  readonly onUpdate?: ForeignKeyRule;
}

/**
 * A foreign key's referential action. `restrict` and `no action` change no row (the source
 * refuses the parent's change instead); the others change the referencing rows inside the
 * source, which some change streams (MySQL's binary log) do not carry.
 */
export type ForeignKeyRule = 'cascade' | 'set null' | 'set default' | 'restrict' | 'no action';

/**
 * What a source relation is. A view or materialized view has no change stream, no primary key
 * and no foreign keys: an instance serves one only when the config names it, and re-reads it.
 */
export type SourceTableKind = 'table' | 'view' | 'materialized_view';

export interface SourceTable {
  readonly name: string;
  /** Absent for a base table (every connector's `tables`); set on each of `views`. */
  readonly kind?: SourceTableKind;
  /**
   * False for a materialized view never refreshed (PostgreSQL's `WITH NO DATA`): reading it
   * fails until `REFRESH MATERIALIZED VIEW`. Absent otherwise.
   */
  readonly populated?: boolean;
  /** In the source's ordinal order. */
  readonly columns: readonly SourceColumn[];
  /** Primary-key columns in key order; empty when the table has none. */
  readonly primaryKey: readonly string[];
  /** Other unique constraints or indexes, each a list of columns. */
  readonly uniqueKeys: readonly (readonly string[])[];
  readonly foreignKeys: readonly SourceForeignKey[];
  /** The source's own row estimate, for progress reporting; null when unknown. */
  readonly estimatedRows: number | null;
}

export interface SourceSchema {
  /** Base tables only (no views), sorted by name. */
  readonly tables: readonly SourceTable[];
  /**
   * Views and materialized views, sorted by name, apart from `tables` so that whatever
   * follows base tables (publications, change streams) never meets one. Absent: none known.
   */
  readonly views?: readonly SourceTable[];
}
