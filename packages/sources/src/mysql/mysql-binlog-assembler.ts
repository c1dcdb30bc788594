import type { SourceColumn } from '@replix/engine';
import type {
  ColumnSchema,
  DeleteRowsEvent,
  QueryEvent,
  TableMapEvent,
  UpdateRowsEvent,
  WriteRowsEvent,
} from '@vlasky/zongji';
import { ReplicationError } from '../errors.ts';
import type { SourceChange } from '../replication.ts';
import { binlogLayoutMismatch } from './mysql-binlog-layout.ts';
import { BinlogRowDecoder } from './mysql-binlog-row-decoder.ts';
import { parseMySqlDdl, tokenizeMySql } from './mysql-ddl.ts';
import { BinlogPosition } from './mysql-position.ts';

export interface FollowedTableRequest {
  readonly table: string;
  readonly columns: readonly SourceColumn[];
}

interface FollowedTable {
  readonly name: string;
  readonly columns: readonly SourceColumn[];
  /** Every column of the table when the stream started; undefined if it did not exist. */
  readonly layout: readonly ColumnSchema[] | undefined;
  /** Set once a `schemaChange` went out: the table's changes are skipped from then on. */
  changed: boolean;
}

/** Whole committed transactions' changes, and the position just after the last of them. */
export interface CommittedChanges {
  changes: SourceChange[];
  position: BinlogPosition;
}

const DETAILS = {
  alter: 'The table was altered (ALTER TABLE).',
  drop: 'The table was dropped.',
  rename: 'The table was renamed, or another table took its name.',
  create: 'The table was created anew.',
  index: 'An index of the table was created or dropped.',
  dropDatabase: 'The database was dropped.',
} as const;

/** The first one or two words of a statement, upper-cased: `COMMIT`, `XA COMMIT`, `ROLLBACK TO`. */
function statementHead(sql: string): [string, string] {
  const [first, second] = tokenizeMySql(sql.slice(0, 200));
  const word = (token: typeof first) => (token?.kind === 'word' ? token.text.toUpperCase() : '');
  return [word(first), word(second)];
}

const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'LOAD']);

/**
 * Turns binlog events, in order, into the changes of whole committed transactions: row events
 * collect in the open transaction, which is committed by its XID event (or a COMMIT query
 * event, for non-transactional tables). DDL statements are transactions of their own: TRUNCATE
 * becomes a `truncate` change, anything that may reshape a followed table a `schemaChange`.
 */
export class BinlogAssembler {
  readonly #database: string;
  readonly #tables = new Map<string, FollowedTable>();
  /** Per table id: the decoder of its latest table-map event. */
  readonly #decoders = new Map<number, { table: FollowedTable; decoder: BinlogRowDecoder }>();
  #file: string;
  #open: SourceChange[] = [];
  readonly #committed: CommittedChanges[] = [];
  #committedChanges = 0;

  constructor(
    database: string,
    tables: readonly FollowedTableRequest[],
    layouts: ReadonlyMap<string, readonly ColumnSchema[]>,
    from: BinlogPosition,
  ) {
    this.#database = database;
    this.#file = from.file;
    for (const { table, columns } of tables) {
      this.#tables.set(table, { name: table, columns, layout: layouts.get(table), changed: false });
    }
    // A table that already differs from the requested columns cannot be followed at all: the
    // stream starts by saying so.
    for (const table of this.#tables.values()) {
      const mismatch = binlogLayoutMismatch(table.columns, table.layout);
      if (mismatch !== null) this.#markChanged(table, mismatch);
    }
    if (this.#open.length > 0) this.#commit(from.offset);
  }

  /** Changes committed and not yet taken. */
  get committedChanges(): number {
    return this.#committedChanges;
  }

  /**
   * The committed transactions waiting, merged up to about `maxChanges` changes (a single
   * transaction is never split), with the position after the last one; null when none wait.
   */
  take(maxChanges: number): CommittedChanges | null {
    const committed = this.#committed;
    if (committed.length === 0) return null;
    const changes: SourceChange[] = [];
    let position = committed[0]!.position;
    let taken = 0;
    while (taken < committed.length) {
      const next = committed[taken]!;
      if (changes.length > 0 && changes.length + next.changes.length > maxChanges) break;
      for (const change of next.changes) changes.push(change);
      position = next.position;
      taken++;
    }
    committed.splice(0, taken);
    this.#committedChanges -= changes.length;
    return { changes, position };
  }

  /**
   * zongji asks for the columns of a table it has no metadata for; null means "skip its rows".
   * The binlog names no columns, so they come from the layout read at the start, provided the
   * table map still has as many columns.
   */
  columnSchemasFor(event: TableMapEvent): ColumnSchema[] | null {
    const table = this.#followed(event);
    if (table === undefined || table.changed || table.layout === undefined) return null;
    if (table.layout.length !== event.columnCount) {
      this.#markChanged(
        table,
        `The table's columns changed: the binlog has ${event.columnCount}, not ${table.layout.length}.`,
      );
      return null;
    }
    // Copies: zongji annotates the entries it is given.
    return table.layout.map((schema) => ({ ...schema }));
  }

  /** A table map, once zongji has set up its entry: the columns of the rows that follow. */
  tableMap(event: TableMapEvent): void {
    const table = this.#followed(event);
    const entry = event.tableMap[event.tableId];
    if (table === undefined || table.changed || entry === undefined) {
      this.#decoders.delete(event.tableId);
      return;
    }
    const decoder = BinlogRowDecoder.build(table.columns, event, entry.columnSchemas);
    if (typeof decoder === 'string') {
      this.#decoders.delete(event.tableId);
      this.#markChanged(table, `The table's columns changed: ${decoder}.`);
      return;
    }
    BinlogRowDecoder.rawColumns(event, entry);
    this.#decoders.set(event.tableId, { table, decoder });
  }

  inserts(event: WriteRowsEvent): void {
    const found = this.#decoding(event.tableId, event, false);
    if (found === null) return;
    for (const image of event.rows) {
      this.#open.push({ op: 'insert', table: found.table, row: found.decoder.row(image) });
    }
  }

  deletes(event: DeleteRowsEvent): void {
    const found = this.#decoding(event.tableId, event, false);
    if (found === null) return;
    for (const image of event.rows) {
      this.#open.push({ op: 'delete', table: found.table, row: found.decoder.row(image) });
    }
  }

  updates(event: UpdateRowsEvent): void {
    const found = this.#decoding(event.tableId, event, true);
    if (found === null) return;
    const { table, decoder } = found;
    for (const { before, after } of event.rows) {
      this.#open.push({
        op: 'update',
        table,
        before: decoder.row(before),
        after: decoder.row(after),
      });
    }
  }

  /** An XID event (or XA PREPARE): the open transaction committed. */
  commit(nextPosition: number): void {
    this.#commit(nextPosition);
  }

  rotate(file: string): void {
    this.#file = file;
  }

  query(event: QueryEvent): void {
    const [first, second] = statementHead(event.query);
    if (first === 'BEGIN' || first === 'SAVEPOINT' || first === 'RELEASE') return;
    if (first === 'ROLLBACK' && second === 'TO') return;
    if (first === 'XA' && second !== 'COMMIT' && second !== 'ROLLBACK') return;
    // A ROLLBACK event ends a transaction whose non-transactional changes stay done.
    if (first === 'COMMIT' || first === 'ROLLBACK' || first === 'XA') {
      this.#commit(event.nextPosition);
      return;
    }
    if (DML.has(first) && this.#sameName(event.schema, this.#database)) {
      throw new ReplicationError(
        'replication_not_ready',
        'The binlog holds a change logged as a statement, which change capture cannot read.',
        { issues: ['Set binlog_format=ROW for every session that writes to the database.'] },
      );
    }
    const ddl = parseMySqlDdl(event.query, event.schema);
    if (ddl === null) {
      // A statement outside any transaction (GRANT, ANALYZE TABLE, …): progress only.
      if (this.#open.length === 0) this.#commit(event.nextPosition);
      return;
    }
    for (const table of this.#tables.values()) {
      const affected =
        ddl.kind === 'dropDatabase'
          ? this.#sameName(ddl.schema, this.#database)
          : ddl.tables.some(
              (name) =>
                this.#sameName(name.schema, this.#database) &&
                this.#sameName(name.table, table.name),
            );
      if (!affected || table.changed) continue;
      if (ddl.kind === 'truncate') this.#open.push({ op: 'truncate', table: table.name });
      else this.#markChanged(table, DETAILS[ddl.kind]);
    }
    // DDL commits implicitly, before and after itself.
    this.#commit(event.nextPosition);
  }

  #decoding(
    tableId: number,
    event: WriteRowsEvent | DeleteRowsEvent | UpdateRowsEvent,
    twoImages: boolean,
  ): { table: string; decoder: BinlogRowDecoder } | null {
    const found = this.#decoders.get(tableId);
    if (found === undefined || found.table.changed) return null;
    // zongji keeps each image's columns-present bitmap on the event.
    const bitmaps = event as {
      columns_present_bitmap?: Uint8Array;
      columns_present_bitmap2?: Uint8Array;
    };
    if (
      !found.decoder.covers(bitmaps.columns_present_bitmap) ||
      (twoImages && !found.decoder.covers(bitmaps.columns_present_bitmap2))
    ) {
      throw new ReplicationError(
        'replication_not_ready',
        `The binlog's row images of table "${found.table.name}" leave columns out.`,
        { issues: ['Set binlog_row_image=FULL.'] },
      );
    }
    return { table: found.table.name, decoder: found.decoder };
  }

  #followed(event: TableMapEvent): FollowedTable | undefined {
    return event.schemaName === this.#database ? this.#tables.get(event.tableName) : undefined;
  }

  /**
   * Names compare without regard to case: with lower_case_table_names they are the same
   * table, and otherwise two names differing only in case are rare enough that a needless
   * reload is the better mistake.
   */
  #sameName(a: string, b: string): boolean {
    return a.toLowerCase() === b.toLowerCase();
  }

  #markChanged(table: FollowedTable, detail: string): void {
    if (table.changed) return;
    table.changed = true;
    this.#open.push({ op: 'schemaChange', table: table.name, detail });
  }

  #commit(nextPosition: number): void {
    // Events inside a transaction may carry no position (MariaDB writes 0 there): the
    // transaction stays open until an event that has one ends it.
    if (!(nextPosition > 0)) return;
    const position = new BinlogPosition(this.#file, nextPosition);
    const changes = this.#open;
    this.#open = [];
    const last = this.#committed.at(-1);
    if (changes.length === 0 && last !== undefined) {
      // Nothing to deliver: only the position moves on.
      last.position = position;
      return;
    }
    this.#committed.push({ changes, position });
    this.#committedChanges += changes.length;
  }
}
