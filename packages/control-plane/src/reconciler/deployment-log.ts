import type { StoreDb } from '../store/open-store.ts';

/** Appends a line to a deployment's infrastructure log (`GET /databases/{id}/infra-logs`). */
export async function appendDeploymentLog(
  db: StoreDb,
  deploymentId: string,
  message: string,
): Promise<void> {
  await db
    .insertInto('log_lines')
    .values({ stream_id: deploymentId, ts: Date.now(), message })
    .execute();
}
