import type { Pool } from 'pg';
import { ReplicationError } from '../errors.ts';
import { Lsn } from './postgres-position.ts';
import type { PostgresReplicationConnection } from './postgres-replication-connection.ts';
import { codeOfPostgresError } from './postgres-replication-errors.ts';
import type { ExportedSnapshot } from './postgres-snapshot.ts';
import { quotePostgresIdentifier } from './postgres-sql.ts';

/**
 * What change data capture keeps on the source, made and removed with a pool connection: the
 * publication of the followed tables and the replication slot. The slot itself is created on a
 * replication connection (`PostgresReplicationConnection`), which alone can export a snapshot.
 */

const IDENTITY_SQL = `
SELECT c.relname AS name, c.relreplident AS identity, c.relkind = 'p' AS partitioned,
  EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)
    AS has_primary_key,
  EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)
    AS has_identity_index
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) AND c.relkind IN ('r', 'p')`;

export interface TableIdentity {
  readonly name: string;
  /** pg_class.relreplident: `d` default (primary key), `n` nothing, `f` full, `i` index. */
  readonly identity: string;
  readonly hasPrimaryKey: boolean;
  readonly hasIdentityIndex: boolean;
  /** A partitioned table (relkind `p`), whose rows live in its partitions. */
  readonly partitioned?: boolean;
}

/**
 * Partitioned tables the server cannot publish as themselves, as sentences. Replix serves a
 * partitioned table as one table, so its partitions' changes must come under its name:
 * `publish_via_partition_root`, which PostgreSQL 13 introduced (12 and older publish them under
 * each partition's name, or refuse the partitioned table).
 */
export function partitionIssues(
  found: readonly TableIdentity[],
  serverVersionNum: number,
): string[] {
  if (serverVersionNum >= 130_000) return [];
  return found
    .filter((table) => table.partitioned === true)
    .map(
      (table) =>
        `Table "${table.name}" is partitioned: following it needs PostgreSQL 13 or later, which publishes its partitions' changes as its own.`,
    );
}

/**
 * Tables that cannot be followed, as sentences. Missing tables aside, this guards the source:
 * once a table without a replica identity is in a publication, PostgreSQL refuses every UPDATE
 * and DELETE on it, so the application writing to it would start failing.
 */
export function identityIssues(
  tables: readonly string[],
  found: readonly TableIdentity[],
): string[] {
  const byName = new Map(found.map((table) => [table.name, table]));
  const issues: string[] = [];
  for (const name of tables) {
    const table = byName.get(name);
    if (!table) {
      issues.push(`Table "${name}" does not exist in the schema.`);
      continue;
    }
    const identified =
      table.identity === 'f' ||
      (table.identity === 'd' && table.hasPrimaryKey) ||
      (table.identity === 'i' && table.hasIdentityIndex);
    if (!identified) {
      issues.push(
        `Table "${name}" has no replica identity: add a primary key or set REPLICA IDENTITY FULL on it, so that its updates and deletes can be streamed.`,
      );
    }
  }
  return issues;
}

/**
 * (Re)creates publication `name` for exactly `tables` of `schema`, in one transaction. Changes
 * of a partition are published as the partitioned table's, which is what snapshots read. It is
 * dropped first, so one left by an older Replix without `publish_via_partition_root` is made
 * anew with it; a stream resumed on such a publication finds the partitioned table missing from
 * `pg_publication_tables` (it lists the partitions) and asks for a new snapshot (`slotProblem`).
 */
export async function createPublication(
  pool: Pool,
  name: string,
  schema: string,
  tables: readonly string[],
  serverVersionNum: number,
): Promise<void> {
  const { rows } = await pool.query<Record<string, unknown>>(IDENTITY_SQL, [schema, tables]);
  const found = rows.map((row) => ({
    name: String(row.name),
    identity: String(row.identity),
    hasPrimaryKey: row.has_primary_key === true,
    hasIdentityIndex: row.has_identity_index === true,
    partitioned: row.partitioned === true,
  }));
  const issues = [...identityIssues(tables, found), ...partitionIssues(found, serverVersionNum)];
  if (issues.length > 0) {
    throw new ReplicationError(
      'replication_not_ready',
      'Some tables cannot be followed by change data capture.',
      { issues },
    );
  }
  const list = tables
    .map((table) => `${quotePostgresIdentifier(schema)}.${quotePostgresIdentifier(table)}`)
    .join(', ');
  const forTables = tables.length > 0 ? ` FOR TABLE ${list}` : '';
  const quoted = quotePostgresIdentifier(name);
  const withRoot = serverVersionNum >= 130_000 ? ' WITH (publish_via_partition_root = true)' : '';
  try {
    // Several statements in one simple query run as one transaction.
    await pool.query(
      `DROP PUBLICATION IF EXISTS ${quoted}; CREATE PUBLICATION ${quoted}${forTables}${withRoot}`,
    );
  } catch (error) {
    if (codeOfPostgresError(error) === '42501') {
      throw new ReplicationError(
        'replication_not_ready',
        'The user may not create the publication: it must own the followed tables and have CREATE on the database (or be a superuser).',
        { issues: ['Make the user the owner of the followed tables, or use a superuser.'] },
      );
    }
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Drops slot `name` if it exists. A walsender streaming from it is terminated first, and the
 * drop is retried until the slot is released: a terminated walsender takes a moment to exit.
 */
export async function dropSlot(pool: Pool, name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ active_pid: number | null }>(
      'SELECT active_pid FROM pg_catalog.pg_replication_slots WHERE slot_name = $1',
      [name],
    );
    const slot = rows[0];
    if (!slot) return;
    try {
      if (slot.active_pid === null) {
        await pool.query('SELECT pg_catalog.pg_drop_replication_slot($1)', [name]);
        return;
      }
      await pool.query('SELECT pg_catalog.pg_terminate_backend($1)', [slot.active_pid]);
    } catch (error) {
      const code = codeOfPostgresError(error);
      if (code === '42704') return; // dropped meanwhile
      if (code !== '55006' || Date.now() > deadline) throw error; // 55006: in use again
    }
    if (Date.now() > deadline) {
      throw new ReplicationError(
        'replication_failed',
        `The replication slot "${name}" stayed in use; it could not be dropped.`,
        { shouldRetry: true },
      );
    }
    await sleep(20);
  }
}

export async function dropPublication(pool: Pool, name: string): Promise<void> {
  await pool.query(`DROP PUBLICATION IF EXISTS ${quotePostgresIdentifier(name)}`);
}

/**
 * Creates logical slot `name` (pgoutput) on a replication connection and returns the snapshot
 * it exports: the database exactly as of the slot's consistent point. The snapshot lives until
 * the connection's next command, so the caller imports it before doing anything else there.
 */
export async function createSlotWithSnapshot(
  connection: PostgresReplicationConnection,
  name: string,
  serverVersionNum: number,
): Promise<ExportedSnapshot> {
  // PostgreSQL 15 took options in parentheses; the bare keyword is the older form.
  const exportSnapshot = serverVersionNum >= 150_000 ? "(SNAPSHOT 'export')" : 'EXPORT_SNAPSHOT';
  const [row] = await connection.query(
    `CREATE_REPLICATION_SLOT ${quotePostgresIdentifier(name)} LOGICAL pgoutput ${exportSnapshot}`,
  );
  return {
    snapshotName: String(row?.snapshot_name),
    position: Lsn.parse(String(row?.consistent_point)),
  };
}
