import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import type { SnapshotReader } from '../src/connector.ts';
import { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import type { BinlogPosition } from '../src/mysql/mysql-position.ts';
import type { ChangeBatch, SourceChange } from '../src/replication.ts';

/** A connector on a test database, built directly so tests see MySQL-specific types. */
export function mySqlConnector(db: TestDatabase): MySqlConnector {
  const url = new URL(db.url);
  return new MySqlConnector({
    host: url.hostname,
    port: Number(url.port),
    user: decodeURIComponent(url.username),
    database: db.name,
  });
}

export function tableNamed(tables: readonly SourceTable[], name: string): SourceTable {
  const table = tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
}

export async function readRows(reader: SnapshotReader, table: SourceTable): Promise<unknown[][]> {
  const rows: unknown[][] = [];
  for await (const batch of reader.readTable({ table: table.name, columns: table.columns })) {
    rows.push(...batch);
  }
  return rows;
}

/** The binlog position a snapshot taken now corresponds to. */
export async function positionNow(connector: MySqlConnector): Promise<BinlogPosition> {
  const reader = await connector.openSnapshot({ withPosition: true });
  await reader.close();
  if (reader.position === null) throw new Error('no position');
  return reader.position as BinlogPosition;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A running change stream that a test pulls from step by step: `until` reads batches until the
 * changes so far satisfy a condition (failing after a timeout with what it got).
 */
export class Follower {
  readonly batches: ChangeBatch[] = [];
  readonly #controller = new AbortController();
  readonly #iterator: AsyncIterator<ChangeBatch>;
  #pending: Promise<IteratorResult<ChangeBatch>> | undefined;

  constructor(connector: MySqlConnector, tables: readonly SourceTable[], from: BinlogPosition) {
    this.#iterator = connector
      .streamChanges({
        tables: tables.map((table) => ({ table: table.name, columns: table.columns })),
        from,
        signal: this.#controller.signal,
      })
      [Symbol.asyncIterator]();
  }

  get changes(): SourceChange[] {
    return this.batches.flatMap((batch) => batch.changes);
  }

  /** The next batch, or null when none comes within `ms`. Rejects when the stream fails. */
  async next(ms = 10_000): Promise<ChangeBatch | null> {
    this.#pending ??= this.#iterator.next();
    const result = await Promise.race([this.#pending, sleep(ms).then(() => 'timeout' as const)]);
    if (result === 'timeout') return null;
    this.#pending = undefined;
    if (result.done) throw new Error('the stream ended');
    this.batches.push(result.value);
    return result.value;
  }

  async until(
    enough: (changes: SourceChange[]) => boolean,
    timeoutMs = 10_000,
  ): Promise<SourceChange[]> {
    const deadline = Date.now() + timeoutMs;
    while (!enough(this.changes)) {
      const batch = await this.next(deadline - Date.now());
      if (batch === null) {
        throw new Error(`timed out with: ${JSON.stringify(this.changes).slice(0, 2000)}`);
      }
    }
    return this.changes;
  }

  abort(): void {
    this.#controller.abort();
  }

  /** Aborts and waits for the iteration to end. */
  async stop(): Promise<void> {
    this.#controller.abort();
    await this.#pending?.catch(() => {});
    await this.#iterator.return?.();
  }
}

/** Changes of one kind for one table. */
export function changesOf<Op extends SourceChange['op']>(
  changes: readonly SourceChange[],
  op: Op,
  table?: string,
): Extract<SourceChange, { op: Op }>[] {
  return changes.filter(
    (change): change is Extract<SourceChange, { op: Op }> =>
      change.op === op && (table === undefined || change.table === table),
  );
}
