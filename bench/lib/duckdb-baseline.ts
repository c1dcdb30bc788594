/**
 * DuckDB on one thread over the same rows and queries as the engine: the per-core baseline of
 * issue 17 ("scans per core at least as fast as DuckDB"). Rows are canonical values
 * (engine/src/source-schema.ts), appended through DuckDB's appender.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBInstance,
  DuckDBTimestampValue,
} from '@duckdb/node-api';

/** A column's DuckDB type, which also says how its canonical value is appended. */
export type DuckDbType =
  | 'INTEGER'
  | 'BIGINT'
  | 'DOUBLE'
  | 'VARCHAR'
  | 'DATE'
  | 'TIMESTAMP'
  | `DECIMAL(${number},${number})`;

export interface DuckDbColumn {
  readonly name: string;
  readonly type: DuckDbType;
}

/** The benchmark's `fact` table (bench/lib/dataset.ts), in DuckDB types. */
export const FACT_COLUMNS: readonly DuckDbColumn[] = [
  { name: 'id', type: 'BIGINT' },
  { name: 'dim_id', type: 'INTEGER' },
  { name: 'qty', type: 'INTEGER' },
  // BIGINT values past 2^53 are appended exactly, from their decimal text.
  { name: 'big', type: 'BIGINT' },
  { name: 'amount', type: 'DOUBLE' },
  { name: 'price', type: 'DECIMAL(12,2)' },
  { name: 'category', type: 'VARCHAR' },
  { name: 'status', type: 'VARCHAR' },
  { name: 'note', type: 'VARCHAR' },
  { name: 'day', type: 'DATE' },
  { name: 'updated_at', type: 'TIMESTAMP' },
  { name: 'score', type: 'DOUBLE' },
];

/** The benchmark's `dim` table. */
export const DIM_COLUMNS: readonly DuckDbColumn[] = [
  { name: 'id', type: 'INTEGER' },
  { name: 'name', type: 'VARCHAR' },
  { name: 'region', type: 'VARCHAR' },
  { name: 'created', type: 'DATE' },
];

function append(appender: DuckDBAppender, type: DuckDbType, value: unknown): void {
  if (value === null || value === undefined) {
    appender.appendNull();
    return;
  }
  switch (type) {
    case 'INTEGER':
      appender.appendInteger(value as number);
      return;
    case 'BIGINT':
      appender.appendBigInt(BigInt(value as string | number));
      return;
    case 'DOUBLE':
      appender.appendDouble(value as number);
      return;
    case 'TIMESTAMP':
      // Canonical timestamps are epoch microseconds, DuckDB's own unit.
      appender.appendTimestamp(new DuckDBTimestampValue(BigInt(Math.round(value as number))));
      return;
    default:
      // VARCHAR, and DATE / DECIMAL from their canonical text (the appender casts).
      appender.appendVarchar(value as string);
      return;
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/**
 * DuckDB limited to one thread. `file` (the default) keeps the tables in a temporary database
 * file and checkpoints after each load, so they are stored compressed (dictionaries, FSST,
 * per-segment min/max) as a DuckDB user's would be: an in-memory database stores them plain.
 */
export class DuckDbBaseline {
  readonly #instance: DuckDBInstance;
  readonly #connection: DuckDBConnection;
  readonly #folder: string | null;

  private constructor(
    instance: DuckDBInstance,
    connection: DuckDBConnection,
    folder: string | null,
  ) {
    this.#instance = instance;
    this.#connection = connection;
    this.#folder = folder;
  }

  static async open(storage: 'file' | 'memory' = 'file'): Promise<DuckDbBaseline> {
    const folder = storage === 'file' ? mkdtempSync(join(tmpdir(), 'replix-duckdb-')) : null;
    const path = folder === null ? ':memory:' : join(folder, 'bench.duckdb');
    const instance = await DuckDBInstance.create(path, { threads: '1' });
    const connection = await instance.connect();
    return new DuckDbBaseline(instance, connection, folder);
  }

  /** Creates `table` and appends `rows` (canonical values in `columns` order). */
  async loadTable(
    table: string,
    columns: readonly DuckDbColumn[],
    rows: readonly (readonly unknown[])[],
  ): Promise<void> {
    const list = columns.map((column) => `"${column.name}" ${column.type}`).join(', ');
    await this.#connection.run(`CREATE TABLE "${table}" (${list})`);
    const appender = await this.#connection.createAppender(table);
    for (const row of rows) {
      for (let c = 0; c < columns.length; c++)
        append(appender, (columns[c] as DuckDbColumn).type, row[c]);
      appender.endRow();
    }
    appender.closeSync();
    if (this.#folder !== null) await this.#connection.run('CHECKPOINT');
  }

  /** The rows `sql` returns, as objects (for checking that both sides agree). */
  async rows(sql: string): Promise<Record<string, unknown>[]> {
    return (await this.#connection.runAndReadAll(sql)).getRowObjects();
  }

  /** Milliseconds of one run of `sql`, its result read to its end. */
  async timeOnce(sql: string): Promise<number> {
    const started = performance.now();
    await this.#connection.runAndReadAll(sql);
    return performance.now() - started;
  }

  /** Median milliseconds of `runs` runs of `sql`, after one warm-up. */
  async timeQuery(sql: string, runs: number): Promise<number> {
    await this.timeOnce(sql);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await this.timeOnce(sql));
    return median(times);
  }

  close(): void {
    this.#connection.closeSync();
    this.#instance.closeSync();
    if (this.#folder !== null) rmSync(this.#folder, { recursive: true, force: true });
  }
}
