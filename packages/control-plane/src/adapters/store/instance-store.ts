import { type Insertable, type Selectable, sql } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { InstanceTable, ReplicaHealth } from './schema.ts';

/**
 * The `instances` table: every write to it, and the reads the reconciler and the API share. A
 * database has at most one serving instance (`standby` false) and, during a deploy, one standby
 * beside it (unique indexes); a stopped instance keeps its row, marked removed.
 */

export type InstanceRow = Selectable<InstanceTable>;

/** Where a started instance is reached, as its driver reported it. */
export interface InstanceAddresses {
  readonly privateUrl: string;
  readonly replicaUrls: ReadonlyArray<string | null>;
  readonly port: number | null;
  readonly pid: number | null;
  readonly containerRef: string;
  /** The version of the database's keys the instance was started with. */
  readonly keysVersion: number;
}

/** The database's serving instance row, if any. */
export function liveInstanceOf(db: StoreDb, databaseId: string): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .where('standby', '=', false)
    .executeTakeFirst();
}

/** The database's instances not removed: the serving one, and a deploy's standby. */
export function liveInstancesOf(db: StoreDb, databaseId: string): Promise<InstanceRow[]> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .execute();
}

/** The instance's row, unless it was removed. */
export function liveInstanceById(
  db: StoreDb,
  instanceId: string,
): Promise<InstanceRow | undefined> {
  return db
    .selectFrom('instances')
    .selectAll()
    .where('id', '=', instanceId)
    .where('removed_at', 'is', null)
    .executeTakeFirst();
}

export async function insertInstance(
  db: StoreDb,
  values: Insertable<InstanceTable> & { id: string },
): Promise<void> {
  await db.insertInto('instances').values(values).execute();
}

/**
 * Records where a started (or restarted) instance is reached. A restart also counts it, and
 * returns the instance's restarts so far.
 */
export async function recordStarted(
  db: StoreDb,
  instanceId: string,
  addresses: InstanceAddresses,
  options: { restart?: boolean } = {},
): Promise<number> {
  const row = await db
    .updateTable('instances')
    .set((eb) => ({
      private_url: addresses.privateUrl,
      replica_urls: JSON.stringify(addresses.replicaUrls),
      port: addresses.port,
      pid: addresses.pid,
      container_ref: addresses.containerRef,
      keys_version: addresses.keysVersion,
      ...(options.restart ? { restarts: eb('restarts', '+', 1) } : {}),
      updated_at: new Date(),
    }))
    .where('id', '=', instanceId)
    .returning('restarts')
    .executeTakeFirstOrThrow();
  return row.restarts;
}

/** The standby becomes the serving instance (the deploy's switch). */
export async function markServing(db: StoreDb, instanceId: string): Promise<void> {
  await db
    .updateTable('instances')
    .set({ standby: false, updated_at: new Date() })
    .where('id', '=', instanceId)
    .execute();
}

/** Marks the instance's row removed (idempotent). */
export async function markRemoved(db: StoreDb, instanceId: string): Promise<void> {
  await db
    .updateTable('instances')
    .set({ removed_at: new Date(), updated_at: new Date() })
    .where('id', '=', instanceId)
    .where('removed_at', 'is', null)
    .execute();
}

/** Records the keys version the instance now has, unless a newer sync got there first. */
export async function recordKeysVersion(
  db: StoreDb,
  instanceId: string,
  fromVersion: number,
  toVersion: number,
): Promise<void> {
  await db
    .updateTable('instances')
    .set({ keys_version: toVersion })
    .where('id', '=', instanceId)
    .where('keys_version', '=', fromVersion)
    .execute();
}

/** The database's endpoint moved: its live instances record the new URL. */
export async function recordEndpointUrl(
  db: StoreDb,
  databaseId: string,
  endpointUrl: string,
): Promise<void> {
  await db
    .updateTable('instances')
    .set({ endpoint_url: endpointUrl })
    .where('database_id', '=', databaseId)
    .where('removed_at', 'is', null)
    .execute();
}

/**
 * Records that a graceful shutdown stopped these instances on purpose: their health becomes
 * unknown (null), which the health monitor reads as "starting" until they answer again, so
 * the restart that follows reports neither `instance.unhealthy` nor `instance.recovered`.
 */
export async function markHealthUnknown(
  db: StoreDb,
  instanceIds: readonly string[],
): Promise<void> {
  if (instanceIds.length === 0) return;
  await db
    .updateTable('instances')
    .set({ health_status: null, updated_at: new Date() })
    .where('id', 'in', instanceIds)
    .where('removed_at', 'is', null)
    .execute();
}

/** A health check's reading of an instance (null: not reported by the instance). */
export interface HealthReadingRecord {
  readonly healthStatus: string | null;
  readonly replicaHealth: readonly ReplicaHealth[];
  readonly snapshotAgeMs: number | null;
  readonly swapCount: number | null;
  readonly rowCounts: Record<string, number> | null;
}

/**
 * Records a health reading, only if the instance's health is still `previous` (so of two
 * monitors only one records a transition). Whether it was recorded.
 */
export async function recordHealthReading(
  db: StoreDb,
  instanceId: string,
  previous: string | null,
  reading: HealthReadingRecord,
): Promise<boolean> {
  const updated = await db
    .updateTable('instances')
    .set({
      health_status: reading.healthStatus,
      replica_health: JSON.stringify(reading.replicaHealth),
      last_health_check: new Date(),
      ...(reading.snapshotAgeMs !== null ? { snapshot_age_ms: reading.snapshotAgeMs } : {}),
      ...(reading.swapCount !== null ? { swap_count: reading.swapCount } : {}),
      ...(reading.rowCounts !== null ? { row_counts: JSON.stringify(reading.rowCounts) } : {}),
    })
    .where('id', '=', instanceId)
    .where('removed_at', 'is', null)
    .where(sql<boolean>`health_status IS NOT DISTINCT FROM ${previous}`)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Whether the database ever had an instance (removed ones count). */
export async function everLaunched(db: StoreDb, databaseId: string): Promise<boolean> {
  const row = await db
    .selectFrom('instances')
    .select('id')
    .where('database_id', '=', databaseId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Every instance not removed whose database row exists: what the reconciler adopts on start. */
export function unremovedInstances(db: StoreDb): Promise<InstanceRow[]> {
  return db
    .selectFrom('instances')
    .innerJoin('databases', 'databases.id', 'instances.database_id')
    .selectAll('instances')
    .where('instances.removed_at', 'is', null)
    .execute();
}

/** The live instances of live databases, with what maintenance checks of each (key sync, restarts). */
export function maintainedInstances(db: StoreDb) {
  return db
    .selectFrom('instances')
    .innerJoin('databases', 'databases.id', 'instances.database_id')
    .select([
      'instances.id as instanceId',
      'instances.keys_version as instanceKeysVersion',
      'instances.control_key_id as controlKeyId',
      'instances.private_url as privateUrl',
      'instances.standby as standby',
      'databases.id as databaseId',
      'databases.keys_version as databaseKeysVersion',
      'databases.status as status',
      'databases.goal as goal',
    ])
    .where('instances.removed_at', 'is', null)
    .where('databases.deleted_at', 'is', null)
    .execute();
}

/** The serving instances of running databases, with what the health monitor polls them with. */
export function monitoredInstances(db: StoreDb) {
  return db
    .selectFrom('instances')
    .innerJoin('databases', 'databases.id', 'instances.database_id')
    .select([
      'instances.id as instanceId',
      'instances.private_url as privateUrl',
      'instances.replica_urls as replicaUrls',
      'instances.control_key_id as controlKeyId',
      'instances.health_status as previous',
      'databases.id as databaseId',
      'databases.account_id as accountId',
      'databases.name as databaseName',
      'databases.key_secret_enc as keySecretEnc',
      'databases.replication_paused as replicationPaused',
    ])
    .where('instances.removed_at', 'is', null)
    .where('instances.standby', '=', false)
    .where('instances.private_url', 'is not', null)
    .where('databases.status', '=', 'running')
    .where('databases.deleted_at', 'is', null)
    .execute();
}
