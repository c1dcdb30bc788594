import type { StoreDb } from './open-store.ts';

/**
 * Up to `limit` lines of a log stream (a build's or a deployment's) after the line id `after`
 * (from the start when null), in the order they were written.
 */
export function logLinesAfter(db: StoreDb, streamId: string, after: string | null, limit: number) {
  let query = db
    .selectFrom('log_lines')
    .select(['id', 'ts', 'message'])
    .where('stream_id', '=', streamId)
    .orderBy('id')
    .limit(limit);
  if (after !== null) query = query.where('id', '>', after);
  return query.execute();
}

/**
 * Appends one line to a log stream: a build's (`GET /v1/builds/{id}/logs`) or a deployment's
 * (`GET /databases/{id}/infra-logs`), read back in order by `logLinesAfter`.
 */
export async function appendLogLine(db: StoreDb, streamId: string, message: string): Promise<void> {
  await db
    .insertInto('log_lines')
    .values({ stream_id: streamId, ts: Date.now(), message })
    .execute();
}
