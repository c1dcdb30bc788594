import type { Pool } from 'pg';
import { PositionExpiredError, ReplicationError, type SourceError } from '../errors.ts';
import { Lsn } from './postgres-position.ts';

/** What the source says about a replication slot and its publication before streaming. */
export interface SlotState {
  /** Null when there is no such slot. */
  readonly slot: {
    readonly database: string | null;
    readonly plugin: string | null;
    /** `reserved`, `extended`, `unreserved` or `lost` (PostgreSQL 13+; null before). */
    readonly walStatus: string | null;
    /** Where the slot's consumer confirmed it had applied everything (`0/16B3748`), or null. */
    readonly confirmedFlush: string | null;
  } | null;
  readonly currentDatabase: string;
  readonly publicationExists: boolean;
  /** Tables of the schema in the publication. */
  readonly publishedTables: ReadonlySet<string>;
}

/**
 * Why streaming from the slot cannot give the changes after `position` for `tables`, or null
 * when it can. Everything that a fresh snapshot mends (slot dropped or invalidated, publication
 * gone, a table not in it) is a `PositionExpiredError`: the caller's answer is a reload, which
 * re-creates them.
 */
export function slotProblem(
  name: string,
  state: SlotState,
  tables: readonly string[],
  position: string,
): SourceError | null {
  const { slot } = state;
  if (slot === null) {
    return new PositionExpiredError(
      position,
      `The replication slot "${name}" no longer exists: take a new snapshot.`,
    );
  }
  if (slot.database !== state.currentDatabase || slot.plugin !== 'pgoutput') {
    return new ReplicationError(
      'replication_failed',
      `The replication slot "${name}" belongs to another database or output plugin; use another replication id.`,
    );
  }
  if (slot.walStatus === 'lost') {
    return new PositionExpiredError(
      position,
      `The replication slot "${name}" was invalidated because the WAL it needed was removed: take a new snapshot.`,
    );
  }
  if (
    slot.confirmedFlush !== null &&
    Lsn.parse(slot.confirmedFlush).compare(Lsn.parse(position)) > 0
  ) {
    // PostgreSQL would silently start at the confirmed position, skipping what lies between.
    return new PositionExpiredError(
      position,
      `The replication slot "${name}" has confirmed changes past this position: take a new snapshot.`,
    );
  }
  if (!state.publicationExists) {
    return new PositionExpiredError(
      position,
      `The publication "${name}" no longer exists: take a new snapshot.`,
    );
  }
  const missing = tables.filter((table) => !state.publishedTables.has(table));
  if (missing.length > 0) {
    const list = missing.map((table) => `"${table}"`).join(', ');
    return new PositionExpiredError(
      position,
      `The publication "${name}" does not include ${list}: take a new snapshot that follows ${missing.length === 1 ? 'it' : 'them'}.`,
    );
  }
  return null;
}

// wal_status came with PostgreSQL 13; to_jsonb keeps the query valid on older servers.
const SLOT_SQL = `
SELECT current_database() AS current_database,
  (SELECT to_jsonb(s) FROM pg_catalog.pg_replication_slots s WHERE s.slot_name = $1) AS slot,
  EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = $1) AS publication_exists,
  ARRAY(SELECT tablename::text FROM pg_catalog.pg_publication_tables
    WHERE pubname = $1 AND schemaname = $2) AS published_tables`;

export async function readSlotState(pool: Pool, name: string, schema: string): Promise<SlotState> {
  const { rows } = await pool.query<Record<string, unknown>>(SLOT_SQL, [name, schema]);
  const row = rows[0] ?? {};
  const slot = row.slot as Record<string, unknown> | null;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    slot: slot
      ? {
          database: text(slot.database),
          plugin: text(slot.plugin),
          walStatus: text(slot.wal_status),
          confirmedFlush: text(slot.confirmed_flush_lsn),
        }
      : null,
    currentDatabase: String(row.current_database),
    publicationExists: row.publication_exists === true,
    publishedTables: new Set(Array.isArray(row.published_tables) ? row.published_tables : []),
  };
}
