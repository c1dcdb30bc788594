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
