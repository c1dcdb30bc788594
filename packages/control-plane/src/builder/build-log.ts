import type { Kysely } from 'kysely';
import type { Store } from '../store/schema.ts';

/** Appends one line to a build's log (`GET /v1/builds/{id}/logs` reads it back in order). */
export async function appendBuildLog(
  db: Kysely<Store>,
  buildId: string,
  message: string,
): Promise<void> {
  await db
    .insertInto('log_lines')
    .values({ stream_id: buildId, ts: Date.now(), message })
    .execute();
}
