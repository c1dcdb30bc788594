import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { insertBuildRow } from '../../../adapters/store/build-store.ts';
import type { DatabaseTable, Store } from '../../../adapters/store/schema.ts';
import { databaseConfigHash } from '../../builder/config-hash.ts';

/**
 * Queues a build of the database in its region and returns the build id; a builder of that
 * region claims it. Pass the transaction that records the goal, if any. The config hash is
 * written again when a builder starts, from the database as it is then.
 */
export async function queueBuild(
  db: Kysely<Store>,
  database: Selectable<DatabaseTable>,
): Promise<string> {
  const id = randomUUID();
  await insertBuildRow(db, {
    id,
    database_id: database.id,
    account_id: database.account_id,
    region: database.region,
    status: 'queued',
    config_hash: databaseConfigHash(database),
    created_at: new Date(),
  });
  await recordAudit(db, {
    accountId: database.account_id,
    databaseId: database.id,
    entityType: 'build',
    entityId: id,
    eventType: 'build.queued',
  });
  return id;
}
