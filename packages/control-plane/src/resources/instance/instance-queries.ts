import type { StoreDb } from '../../store/open-store.ts';

export function connectionById(db: StoreDb, id: string) {
  return db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
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

/** How many of the database's unseen notifications were skipped. */
export async function skippedNotificationCount(db: StoreDb, databaseId: string): Promise<number> {
  const tally = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('database_id', '=', databaseId)
    .where('seen_at', 'is', null)
    .where('skipped', '=', true)
    .executeTakeFirstOrThrow();
  return Number(tally.n);
}

/** The database's latest deployment, if any. */
export function latestDeploymentOf(db: StoreDb, databaseId: string) {
  return db
    .selectFrom('deployments')
    .select(['id', 'finished_at'])
    .where('database_id', '=', databaseId)
    .orderBy('started_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
