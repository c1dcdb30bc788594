import type { ColumnType, ElementType, SourceSchema, SourceTableKind } from '../source-schema.ts';
import type { SchemaConfig } from './schema-config-schema.ts';

export interface CompiledColumn {
  /** The name in the API (after `field_aliases`). */
  readonly name: string;
  readonly sourceName: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly sourceType: string;
  /** Declared scale of a `decimal` column. */
  readonly scale: number | undefined;
  /** Fractional-second digits of a `timestamp` or `time` column, when the source says. */
  readonly precision?: number | undefined;
  /** The element type of an `array` column. */
  readonly elementType?: ElementType | undefined;
  /** Position among the table's stored columns. */
  readonly index: number;
}

export interface CompiledRelation {
  /** The name in the API. */
  readonly name: string;
  /** `forward`: the foreign key is on this table, to-one. `reverse`: on the target, to-many. */
  readonly kind: 'forward' | 'reverse';
  /** API name of the related table. */
  readonly target: string;
  /** Column positions in this table that the key joins on. */
  readonly localColumns: readonly number[];
  /** Column positions in the target table, matching `localColumns` one to one. */
  readonly targetColumns: readonly number[];
  readonly constraintName: string;
}

export interface CompiledTable {
  readonly name: string;
  readonly sourceName: string;
  /**
   * A `view` or `materialized_view` is loaded with the snapshot but has no change stream: it is
   * re-read whole every `refreshIntervalS` seconds instead.
   */
  readonly kind: SourceTableKind;
  /** Seconds between re-reads of a view; null for a base table. */
  readonly refreshIntervalS: number | null;
  readonly columns: readonly CompiledColumn[];
  readonly columnsByName: ReadonlyMap<string, CompiledColumn>;
  /** Primary-key column positions; empty when the table has no primary key. */
  readonly primaryKey: readonly number[];
  readonly relations: readonly CompiledRelation[];
  readonly relationsByName: ReadonlyMap<string, CompiledRelation>;
  /** The SQL predicate baked into the snapshot, if any (table entry or root). */
  readonly where: string | undefined;
  /** Source column names the predicate reads, when the config names them. */
  readonly whereColumns: readonly string[] | undefined;
}

/** The schema an instance serves: source tables, config applied, names resolved. */
export interface CompiledSchema {
  /** Sorted by API name. */
  readonly tables: readonly CompiledTable[];
  readonly tablesByName: ReadonlyMap<string, CompiledTable>;
  readonly config: SchemaConfig;
  /**
   * The introspected source the schema was compiled from: every table with its foreign keys
   * and their rules, served or not (foreign-key actions reach through unserved tables).
   */
  readonly source?: SourceSchema;
}
