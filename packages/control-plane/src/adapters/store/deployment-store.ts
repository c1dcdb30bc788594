import type { StoreDb } from './open-store.ts';

/** The `deployments` table (one row per deploy of a build) and each one's log lines. */

export async function insertDeployment(
  db: StoreDb,
  deployment: { id: string; databaseId: string; buildId: string; action: string },
): Promise<void> {
  await db
    .insertInto('deployments')
    .values({
      id: deployment.id,
      database_id: deployment.databaseId,
      build_id: deployment.buildId,
      action: deployment.action,
      status: 'in_progress',
    })
    .execute();
}

export async function finishDeployment(
  db: StoreDb,
  deploymentId: string,
  status: 'succeeded' | 'failed',
): Promise<void> {
  await db
    .updateTable('deployments')
    .set({ status, finished_at: new Date() })
    .where('id', '=', deploymentId)
    .execute();
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
