import type { Insertable, Selectable } from 'kysely';
import { notFound } from '../../domain/errors.ts';
import type { StoreDb } from './open-store.ts';
import type { BuildTable } from './schema.ts';

/** Builds an operator's recent-builds list shows. */
const RECENT_BUILDS = 10;

/**
 * A build's status and artifact location (`image_uri`), or undefined when there is no such
 * build: what an instance is launched from, and what the artifact-files route serves.
 */
export function buildArtifactOf(
  db: StoreDb,
  id: string,
): Promise<Pick<Selectable<BuildTable>, 'status' | 'image_uri'> | undefined> {
  return db
    .selectFrom('builds')
    .select(['status', 'image_uri'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A build's status and error, or undefined when there is no such build. */
export function buildStatusOf(
  db: StoreDb,
  id: string,
): Promise<Pick<Selectable<BuildTable>, 'status' | 'error'> | undefined> {
  return db
    .selectFrom('builds')
    .select(['status', 'error'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The database's newest succeeded build's id, if it has one. */
export async function latestSucceededBuildOf(
  db: StoreDb,
  databaseId: string,
): Promise<string | undefined> {
  const latest = await db
    .selectFrom('builds')
    .select('id')
    .where('database_id', '=', databaseId)
    .where('status', '=', 'succeeded')
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return latest?.id;
}

/** Whether the database has a succeeded build: something to deploy. */
export async function hasSucceededBuild(db: StoreDb, databaseId: string): Promise<boolean> {
  const build = await db
    .selectFrom('builds')
    .select('id')
    .where('database_id', '=', databaseId)
    .where('status', '=', 'succeeded')
    .limit(1)
    .executeTakeFirst();
  return build !== undefined;
}

/** A build of the account's database: its id and status. */
export function buildOfDatabase(
  tx: StoreDb,
  accountId: string,
  databaseId: string,
  buildId: string,
) {
  return tx
    .selectFrom('builds')
    .select(['id', 'status'])
    .where('id', '=', buildId)
    .where('database_id', '=', databaseId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** A build of the caller's account; another account's build is a 404 like a missing one. */
export async function ownedBuild(
  db: StoreDb,
  accountId: string,
  id: string,
): Promise<Selectable<BuildTable>> {
  const row = await db
    .selectFrom('builds')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) throw notFound('Build');
  return row;
}

/** A database's builds, newest first. */
export function buildRowsOf(db: StoreDb, databaseId: string): Promise<Selectable<BuildTable>[]> {
  return db
    .selectFrom('builds')
    .selectAll()
    .where('database_id', '=', databaseId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function insertBuildRow(db: StoreDb, values: Insertable<BuildTable>): Promise<void> {
  await db.insertInto('builds').values(values).execute();
}

/** The database's newest build, if any. */
export function latestBuildOf(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('builds')
    .selectAll()
    .where('database_id', '=', databaseId)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The config hash a build was made from. */
export function buildConfigHash(db: StoreDb, buildId: string) {
  return db.selectFrom('builds').select('config_hash').where('id', '=', buildId).executeTakeFirst();
}

/** A region's latest builds, of one account or (undefined) of all. */
export function recentBuildRows(db: StoreDb, region: string, accountId: string | undefined) {
  let query = db
    .selectFrom('builds')
    .select(['id', 'status', 'started_at', 'finished_at', 'duration_seconds'])
    .where('region', '=', region)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(RECENT_BUILDS);
  if (accountId) query = query.where('account_id', '=', accountId);
  return query.execute();
}

/** A build's row by id, or undefined when there is none. */
export function buildById(
  db: StoreDb,
  buildId: string,
): Promise<Selectable<BuildTable> | undefined> {
  return db.selectFrom('builds').selectAll().where('id', '=', buildId).executeTakeFirst();
}

/** The error a build recorded (null when it has none), or undefined when there is no build. */
export async function buildErrorOf(
  db: StoreDb,
  buildId: string,
): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('builds')
    .select('error')
    .where('id', '=', buildId)
    .executeTakeFirst();
  return row?.error;
}
