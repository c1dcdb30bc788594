import type { Selectable } from 'kysely';
import type { StoreDb } from './open-store.ts';
import type { BuildTable } from './schema.ts';

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
