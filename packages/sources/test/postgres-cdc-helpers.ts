import type { SourceTable } from '@replix/engine';
import type { DatabaseAdmin, TestDatabase } from '@replix/testkit';
import { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import type { ChangeBatch, ReplicationPosition, SourceChange } from '../src/replication.ts';

/** A connector on a test database, built directly so tests can read its `replicationName`. */
export function postgresConnector(db: TestDatabase, user = 'postgres'): PostgresConnector {
  const url = new URL(db.url);
  return new PostgresConnector({
    host: url.hostname,
    port: Number(url.port),
    user,
    database: db.name,
  });
}

/** The table of that name, from an introspection. */
export function tableNamed(tables: readonly SourceTable[], name: string): SourceTable {
  const table = tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
}

export interface Taken {
  readonly batches: ChangeBatch[];
  readonly changes: SourceChange[];
  /** The last batch's position (`from` when no batch came). */
  readonly position: ReplicationPosition;
}

export interface TakeOptions {
  /** Acknowledge each batch as it arrives, as a consumer does once it applied it. */
  readonly acknowledge?: boolean;
  readonly timeoutMs?: number;
}

/**
 * Streams from `from` until `enough` holds for the changes so far, then stops (the consumer
 * `break`s). Fails after a timeout with what it got, so a missing change fails fast.
 */
export async function takeChanges(
  connector: PostgresConnector,
  tables: readonly SourceTable[],
  from: ReplicationPosition,
  enough: (changes: readonly SourceChange[]) => boolean,
  options: TakeOptions = {},
): Promise<Taken> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 10_000);
  const batches: ChangeBatch[] = [];
  const changes: SourceChange[] = [];
  try {
    for await (const batch of connector.streamChanges({
      tables: tables.map((table) => ({ table: table.name, columns: table.columns })),
      from,
      signal: controller.signal,
    })) {
      batches.push(batch);
      changes.push(...batch.changes);
      if (options.acknowledge) await connector.acknowledge(batch.position);
      if (enough(changes)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  if (!enough(changes)) {
    throw new Error(`timed out with ${changes.length} changes: ${JSON.stringify(changes)}`);
  }
  return { batches, changes, position: batches.at(-1)?.position ?? from };
}

/** Stops once `count` changes arrived. */
export const atLeast =
  (count: number) =>
  (changes: readonly SourceChange[]): boolean =>
    changes.length >= count;

/** The replication slot's row, or undefined. */
export async function slotRow(
  admin: DatabaseAdmin,
  name: string,
): Promise<{ active: boolean; confirmed_flush_lsn: string } | undefined> {
  const [row] = await admin.query<{ active: boolean; confirmed_flush_lsn: string }>(
    'SELECT active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1',
    [name],
  );
  return row;
}
