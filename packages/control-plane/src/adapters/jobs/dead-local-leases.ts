import { sql } from 'kysely';
import type { StoreDb } from '../store/open-store.ts';
import type { JobQueue, JobTable } from './job-queue.ts';
import { ownerIsGoneLocally } from './lease-owner.ts';

/**
 * Ends the leases held by control-plane processes of this machine that are gone (killed), so
 * their jobs are taken over now rather than when the lease runs out. Owners on other machines
 * are left to expire. Returns the jobs freed.
 */
export async function endDeadLocalLeases<T extends JobTable>(
  db: StoreDb,
  queue: JobQueue<T>,
): Promise<number> {
  const table = sql.table(queue.table);
  const { rows } = await sql<{ lease_owner: string }>`
    SELECT DISTINCT lease_owner FROM ${table}
     WHERE lease_owner IS NOT NULL AND lease_until > now()`.execute(db);
  let freed = 0;
  for (const { lease_owner: owner } of rows) {
    if (!ownerIsGoneLocally(owner)) continue;
    const { numAffectedRows } = await sql`
      UPDATE ${table} SET lease_owner = NULL, lease_until = NULL
       WHERE lease_owner = ${owner}`.execute(db);
    freed += Number(numAffectedRows ?? 0);
  }
  return freed;
}
