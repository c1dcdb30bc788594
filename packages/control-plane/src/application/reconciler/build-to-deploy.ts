import { latestSucceededBuildOf } from '../../adapters/store/build-store.ts';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';

/**
 * The build a reconfigure, resize or resume deploys: the one the database runs (or last ran),
 * or, when no deploy ever succeeded (a failed first deploy), its newest succeeded build, so
 * fixing a setting and reconfiguring gets a database out of `failed` without a new build.
 */
export async function buildToDeploy(db: StoreDb, database: DatabaseRow): Promise<string | null> {
  if (database.current_build_id) return database.current_build_id;
  return (await latestSucceededBuildOf(db, database.id)) ?? null;
}
