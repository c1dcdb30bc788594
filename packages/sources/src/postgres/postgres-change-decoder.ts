import type { SourceColumn } from '@replix/engine';
import { ReplicationError } from '../errors.ts';
import type { SourceChange } from '../replication.ts';
import type { RowConverter } from '../row-converter.ts';
import type { PgoutputMessage, RelationColumn, TupleValue } from './postgres-pgoutput.ts';
import { postgresRowConverter } from './postgres-types.ts';

type RelationMessage = Extract<PgoutputMessage, { tag: 'relation' }>;
type RowMessage = Extract<PgoutputMessage, { tag: 'insert' | 'update' | 'delete' | 'truncate' }>;

/** A column type as the introspector names it: `format_type(oid, typmod)`. */
export type TypeNamer = (columns: readonly RelationColumn[]) => Promise<readonly string[]>;

export interface FollowedTable {
  readonly table: string;
  readonly columns: readonly SourceColumn[];
}

/** How one relation of the stream maps onto a followed table's requested columns. */
interface TableShape {
  readonly table: string;
  /** For each requested column, its index among the relation's columns. */
  readonly indexes: readonly number[];
  /** For each requested column, whether a key-only old row carries it. */
  readonly isKey: readonly boolean[];
  readonly convert: RowConverter;
}

/** A relation the stream sent that is not followed (another table, or one whose schema changed). */
const IGNORED = null;

/**
 * Turns pgoutput messages into `SourceChange`s for the followed tables of one schema: rows in
 * the requested column order, values converted exactly as the snapshot converts them.
 *
 * PostgreSQL describes a table (a Relation message) before its first change in a session and
 * again after its definition changes. Each description is checked against the requested
 * columns, names and types as `format_type` prints them; the first that differs yields one
 * `schemaChange` and the table's later changes are dropped, because rows of another shape
 * cannot be delivered in the requested one.
 */
export class PostgresChangeDecoder {
  readonly #schema: string;
  readonly #followed: ReadonlyMap<string, readonly SourceColumn[]>;
  readonly #typeNames: TypeNamer;
  /** By relation OID: the shape of a followed table, or IGNORED. */
  readonly #relations = new Map<number, TableShape | typeof IGNORED>();
  /** Relation OID each followed table was first seen with, to notice it being re-created. */
  readonly #tableOids = new Map<string, number>();
  readonly #changed = new Set<string>();

  constructor(schema: string, tables: readonly FollowedTable[], typeNames: TypeNamer) {
    this.#schema = schema;
    this.#followed = new Map(tables.map((table) => [table.table, table.columns]));
    this.#typeNames = typeNames;
  }

  /** Records a table description; returns the `schemaChange` it amounts to, if any. */
  async relation(message: RelationMessage): Promise<SourceChange | null> {
    const previous = this.#relations.get(message.relationId);
    const previousTable = previous?.table;
    const followedName = message.schema === this.#schema ? message.name : undefined;
    const requested = followedName === undefined ? undefined : this.#followed.get(followedName);

    // A followed table renamed or moved to another schema keeps its OID.
    if (previousTable !== undefined && previousTable !== followedName) {
      this.#relations.set(message.relationId, IGNORED);
      const where = message.schema === this.#schema ? '' : ` in schema "${message.schema}"`;
      return this.#schemaChange(previousTable, `table renamed to "${message.name}"${where}`);
    }
    if (followedName === undefined || requested === undefined || this.#changed.has(followedName)) {
      this.#relations.set(message.relationId, IGNORED);
      return null;
    }
    const firstOid = this.#tableOids.get(followedName);
    if (firstOid !== undefined && firstOid !== message.relationId) {
      this.#relations.set(message.relationId, IGNORED);
      return this.#schemaChange(followedName, 'table dropped and created again');
    }
    this.#tableOids.set(followedName, message.relationId);

    const typeNames = await this.#typeNames(message.columns);
    const differences = columnDifferences(requested, message.columns, typeNames);
    if (differences.length > 0) {
      this.#relations.set(message.relationId, IGNORED);
      return this.#schemaChange(followedName, differences.join('; '));
    }
    const position = new Map(message.columns.map((column, index) => [column.name, index]));
    const indexes = requested.map((column) => position.get(column.name)!);
    this.#relations.set(message.relationId, {
      table: followedName,
      indexes,
      isKey: indexes.map((index) => message.columns[index]!.isKey),
      convert: postgresRowConverter(requested),
    });
    return null;
  }

  /** The changes a row message makes to followed tables (none for other tables). */
  changes(message: RowMessage): SourceChange[] {
    if (message.tag === 'truncate') {
      const changes: SourceChange[] = [];
      for (const id of message.relationIds) {
        const shape = this.#shape(id);
        if (shape) changes.push({ op: 'truncate', table: shape.table });
      }
      return changes;
    }
    const shape = this.#shape(message.relationId);
    if (!shape) return [];
    const { table } = shape;
    switch (message.tag) {
      case 'insert':
        return [{ op: 'insert', table, row: row(shape, message.after) }];
      case 'update': {
        const before = message.before && oldRow(shape, message.before, message.beforeKind);
        return [{ op: 'update', table, before, after: row(shape, message.after) }];
      }
      case 'delete':
        return [{ op: 'delete', table, row: oldRow(shape, message.before, message.beforeKind) }];
    }
  }

  #shape(relationId: number): TableShape | null {
    const shape = this.#relations.get(relationId);
    if (shape === undefined) {
      // pgoutput always describes a relation before its first change in a session.
      throw new ReplicationError(
        'replication_failed',
        'The replication stream sent a change for a table it had not described.',
        { shouldRetry: true },
      );
    }
    return shape;
  }

  #schemaChange(table: string, detail: string): SourceChange {
    this.#changed.add(table);
    return { op: 'schemaChange', table, detail };
  }
}

/**
 * Requested columns against a relation's, by name: each missing, added or retyped column as a
 * phrase (`column "note" added`). Column order does not matter, rows are mapped by name.
 */
export function columnDifferences(
  requested: readonly SourceColumn[],
  columns: readonly RelationColumn[],
  typeNames: readonly string[],
): string[] {
  const streamed = new Map(columns.map((column, index) => [column.name, typeNames[index]!]));
  const differences: string[] = [];
  for (const column of requested) {
    const type = streamed.get(column.name);
    if (type === undefined) differences.push(`column "${column.name}" dropped`);
    else if (type !== column.sourceType) {
      differences.push(`column "${column.name}" changed type from ${column.sourceType} to ${type}`);
    }
  }
  // Columns the stream has beyond the requested ones (excluded by the schema config, or added
  // since) do not stop delivery: requested columns are picked by name.
  return differences;
}

function row(shape: TableShape, values: readonly TupleValue[]): unknown[] {
  const { indexes } = shape;
  const result = new Array<unknown>(indexes.length);
  for (let i = 0; i < indexes.length; i++) result[i] = values[indexes[i]!];
  shape.convert(result);
  return result;
}

/**
 * The old row of an update or delete. A key-only old row (REPLICA IDENTITY DEFAULT or USING
 * INDEX) sends NULL for every other column: those are unknown, so `undefined`, not null.
 */
function oldRow(
  shape: TableShape,
  values: readonly TupleValue[],
  kind: 'key' | 'old' | null,
): unknown[] {
  const result = row(shape, values);
  if (kind === 'key') {
    for (let i = 0; i < result.length; i++) if (!shape.isKey[i]) result[i] = undefined;
  }
  return result;
}
