import type { SourceColumn } from '@replix/engine';
import type { ConnectionPool } from 'mssql';
import { PositionExpiredError, ReplicationError } from '../errors.ts';
import type { ChangeBatch, SourceChange } from '../replication.ts';
import {
  type MsSqlCaptureInstance,
  type MsSqlTablePlan,
  planMsSqlTable,
} from './mssql-capture-plan.ts';
import {
  groupMsSqlChanges,
  type MsSqlChangeRow,
  type MsSqlUnsentColumns,
  msSqlUnsentColumns,
  withUnsentValues,
} from './mssql-change-rows.ts';
import { msSqlErrorNumber } from './mssql-errors.ts';
import { msSqlColumnsByTable, msSqlColumnsSql } from './mssql-introspector.ts';
import { MsSqlLsn } from './mssql-position.ts';
import {
  intParameter,
  lsnParameter,
  msSqlArrayRows,
  msSqlQuery,
  nameParameter,
} from './mssql-query.ts';
import { CAPTURE_JOB_ISSUE, ENABLE_CDC_ISSUE } from './mssql-replication.ts';
import { MSSQL_WINDOW_SQL, msSqlChangesSql } from './mssql-sql.ts';
import { msSqlRowConverter } from './mssql-types.ts';

/**
 * Transactions read per poll at most, so that a backlog (a stream resuming after hours) is read
 * in bounded steps rather than as one result held in memory.
 */
export const MSSQL_MAX_TRANSACTIONS_PER_POLL = 500;

/** SQL Server's error for a change function called with an LSN range outside its history. */
const INVALID_LSN_RANGE = 313;

// One row per captured column of each capture instance of the schema's tables.
const CAPTURE_INSTANCES_SQL = `
SELECT t.name AS table_name, ct.capture_instance,
  sys.fn_cdc_get_min_lsn(ct.capture_instance) AS min_lsn, cc.column_name
FROM cdc.change_tables AS ct
JOIN sys.tables AS t ON t.object_id = ct.source_object_id
JOIN cdc.captured_columns AS cc ON cc.object_id = ct.object_id
WHERE t.schema_id = SCHEMA_ID(@schema)`;

const ZERO_LSN = MsSqlLsn.parse('0'.repeat(20));

function lsnOf(value: unknown): MsSqlLsn | null {
  return value instanceof Uint8Array ? MsSqlLsn.fromBytes(value) : null;
}

function hexOf(value: unknown): string {
  const lsn = lsnOf(value);
  if (lsn === null) {
    throw new ReplicationError('replication_failed', 'A change row came without its LSN.');
  }
  return lsn.hex;
}

/** The LSN range a poll reads: from `next` (the LSN after the last position) up to `to`. */
interface PollWindow {
  readonly next: MsSqlLsn;
  readonly to: MsSqlLsn;
  /** More transactions wait beyond `to`. */
  readonly full: boolean;
}

/** A followed table and what reading its changes takes. */
interface FollowedTable {
  readonly table: string;
  readonly columns: readonly SourceColumn[];
  readonly unsent: MsSqlUnsentColumns;
}

/** What one poll found. */
export interface MsSqlPollResult {
  /** Null when there is nothing to deliver. */
  readonly batch: ChangeBatch | null;
  /** More is waiting: poll again without pausing. */
  readonly more: boolean;
}

/**
 * Reads the changes of the followed tables from their CDC change functions, one window of
 * transactions per poll, on a pool of one connection. Each poll reads what the capture job has
 * copied since the last position: for each table `cdc.fn_cdc_get_all_changes_<capture
 * instance>` from the LSN after the last position up to the window's end; the tables' rows are
 * merged into whole transactions and delivered as one batch positioned at the window's end.
 * When the capture job moved on but nothing changed in the followed tables, the batch is empty:
 * the position still advances, so that a stream resumed later does not start from a position
 * the cleanup job has since removed.
 *
 * The first poll checks the setup: a table without a capture instance covering its requested
 * columns fails the stream as not ready. Later, a table that is dropped, loses a requested
 * column, changes one's type or loses its capture instance gets one `schemaChange` and is
 * followed no more. A position older than a table's history (`sys.fn_cdc_get_min_lsn`, moved
 * forward by the cleanup job) fails with `PositionExpiredError`.
 */
export class MsSqlChangePoller {
  readonly #pool: ConnectionPool;
  readonly #schema: string;
  #followed: FollowedTable[];
  #position: MsSqlLsn;
  #firstPoll = true;

  constructor(
    pool: ConnectionPool,
    schema: string,
    tables: readonly { readonly table: string; readonly columns: readonly SourceColumn[] }[],
    from: MsSqlLsn,
  ) {
    this.#pool = pool;
    this.#schema = schema;
    this.#followed = tables.map(({ table, columns }) => ({
      table,
      columns,
      unsent: msSqlUnsentColumns(columns),
    }));
    this.#position = from;
  }

  get position(): MsSqlLsn {
    return this.#position;
  }

  async poll(): Promise<MsSqlPollResult> {
    const window = await this.#readWindow();
    const moved = window.to.compare(this.#position) > 0;
    if (!moved && !this.#firstPoll) return { batch: null, more: false };

    const { reads, changes } = await this.#planReads(window.next);
    if (moved) {
      const rows: MsSqlChangeRow[] = [];
      for (const read of reads) {
        rows.push(...(await this.#readChanges(read.table, read.captureInstance, window)));
      }
      for (const transaction of groupMsSqlChanges(rows)) changes.push(...transaction.changes);
    } else if (changes.length === 0) {
      return { batch: null, more: false };
    }
    if (moved) this.#position = window.to;
    return { batch: { changes, position: this.#position }, more: moved && window.full };
  }

  async #readWindow(): Promise<PollWindow> {
    const [row] = await msSqlQuery(this.#pool, MSSQL_WINDOW_SQL, [
      lsnParameter('last_lsn', this.#position),
      intParameter('limit', MSSQL_MAX_TRANSACTIONS_PER_POLL),
    ]);
    const max = lsnOf(row?.max_lsn);
    const next = lsnOf(row?.next_lsn);
    if (max === null || max.isZero || next === null) {
      throw new ReplicationError(
        'replication_not_ready',
        'Change data capture is not enabled for the source database, or its capture job has not run.',
        { issues: [ENABLE_CDC_ISSUE, CAPTURE_JOB_ISSUE] },
      );
    }
    const full = Number(row?.transactions) >= MSSQL_MAX_TRANSACTIONS_PER_POLL;
    const nth = lsnOf(row?.last_transaction_lsn);
    return { next, to: full && nth !== null ? nth : max, full };
  }

  /**
   * The capture instances and current columns of the followed tables, and what to do about
   * each: the reads of this poll, and `schemaChange`s for tables no longer followed.
   */
  async #planReads(next: MsSqlLsn): Promise<{
    reads: { table: FollowedTable; captureInstance: string }[];
    changes: SourceChange[];
  }> {
    const plans = await this.#plans(next);
    const reads: { table: FollowedTable; captureInstance: string }[] = [];
    const changes: SourceChange[] = [];
    const setupIssues: string[] = [];
    for (const table of this.#followed) {
      const plan = plans.get(table.table)!;
      if (plan.kind === 'expired') {
        throw new PositionExpiredError(
          this.#position.serialize(),
          `The change history of table "${table.table}" after LSN ${this.#position} has been ` +
            `cleaned up (capture instance "${plan.captureInstance}" now starts at ` +
            `${plan.minLsn}); take a new snapshot.`,
        );
      }
      if (plan.kind === 'read') reads.push({ table, captureInstance: plan.captureInstance });
      else if (plan.kind === 'notCaptured' && this.#firstPoll) setupIssues.push(plan.issue);
      else changes.push({ op: 'schemaChange', table: table.table, detail: plan.detail });
    }
    if (setupIssues.length > 0) {
      throw new ReplicationError(
        'replication_not_ready',
        'Change data capture does not capture every followed table and column.',
        { issues: setupIssues },
      );
    }
    this.#firstPoll = false;
    this.#followed = reads.map((read) => read.table);
    return { reads, changes };
  }

  async #plans(next: MsSqlLsn): Promise<Map<string, MsSqlTablePlan>> {
    const names = this.#followed.map((followed) => followed.table);
    const plans = new Map<string, MsSqlTablePlan>();
    if (names.length === 0) return plans;
    const schema = nameParameter('schema', this.#schema);
    const instanceRows = await msSqlQuery(this.#pool, CAPTURE_INSTANCES_SQL, [schema]);
    const columnRows = await msSqlQuery(this.#pool, msSqlColumnsSql(names.length), [
      schema,
      ...names.map((name, i) => nameParameter(`t${i}`, name)),
    ]);
    const currentColumns = msSqlColumnsByTable(columnRows);
    type Found = { minLsn: MsSqlLsn; columns: Set<string> };
    const instances = new Map<string, Map<string, Found>>();
    for (const row of instanceRows) {
      const table = String(row.table_name);
      const name = String(row.capture_instance);
      const ofTable = instances.get(table) ?? new Map<string, Found>();
      instances.set(table, ofTable);
      const instance = ofTable.get(name) ?? {
        minLsn: lsnOf(row.min_lsn) ?? ZERO_LSN,
        columns: new Set<string>(),
      };
      instance.columns.add(String(row.column_name));
      ofTable.set(name, instance);
    }
    for (const followed of this.#followed) {
      plans.set(
        followed.table,
        planMsSqlTable({
          schema: this.#schema,
          table: followed.table,
          requested: followed.columns,
          current: currentColumns.get(followed.table),
          instances: [...(instances.get(followed.table) ?? [])].map(
            ([name, instance]): MsSqlCaptureInstance => ({ name, ...instance }),
          ),
          next,
        }),
      );
    }
    return plans;
  }

  /** The changes of one table in the window, values in canonical form. */
  async #readChanges(
    followed: FollowedTable,
    captureInstance: string,
    window: PollWindow,
  ): Promise<MsSqlChangeRow[]> {
    const { table, columns, unsent } = followed;
    let rows: unknown[][];
    try {
      rows = await msSqlArrayRows(this.#pool, msSqlChangesSql(captureInstance, columns), [
        lsnParameter('last_lsn', this.#position),
        lsnParameter('to_lsn', window.to),
      ]);
    } catch (error) {
      // The cleanup job moved the history's low end past the window since the plan checked it.
      if (msSqlErrorNumber(error) === INVALID_LSN_RANGE) {
        throw new PositionExpiredError(
          this.#position.serialize(),
          `The change history of table "${table}" after LSN ${this.#position} has been ` +
            'cleaned up; take a new snapshot.',
        );
      }
      throw error;
    }
    const count = columns.length;
    const convert = msSqlRowConverter(columns);
    return rows.map((row): MsSqlChangeRow => {
      const values = row.slice(0, count);
      convert(values);
      const operation = Number(row[count + 2]);
      return {
        table,
        lsn: hexOf(row[count]),
        seqval: hexOf(row[count + 1]),
        operation,
        values: withUnsentValues(operation, values, unsent),
      };
    });
  }
}
