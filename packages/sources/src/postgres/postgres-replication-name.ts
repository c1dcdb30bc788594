import { createHash } from 'node:crypto';
import { SourceConfigError } from '../errors.ts';
import { POSTGRES_REPLICATION_STATE } from '../source-dialect.ts';
import type { PostgresConnectorOptions } from './postgres-connection-options.ts';

const PREFIX = POSTGRES_REPLICATION_STATE.namePrefix;
/** PostgreSQL identifiers (and slot names) hold at most 63 bytes. */
const MAX_ID_LENGTH = 63 - PREFIX.length;

/**
 * The name of both the replication slot and the publication that change data capture keeps on
 * the source: `replix_<replicationId>`, or, without an id, `replix_` and 12 hex digits of a
 * hash of host, port, database and schema, so one source keeps one stable name across
 * restarts. Slot names allow only lowercase letters, digits and `_`, so the name needs no
 * quoting anywhere and is checked here, before anything connects.
 */
export function postgresReplicationName(options: PostgresConnectorOptions): string {
  const id = options.replicationId;
  if (id === undefined) {
    const where = [options.host, options.port, options.database, options.schema ?? 'public'];
    return PREFIX + createHash('sha256').update(JSON.stringify(where)).digest('hex').slice(0, 12);
  }
  if (!/^[a-z0-9_]+$/.test(id) || id.length > MAX_ID_LENGTH) {
    throw new SourceConfigError(
      'invalid_source_url',
      `A replication id is 1 to ${MAX_ID_LENGTH} lowercase letters, digits or underscores.`,
    );
  }
  return PREFIX + id;
}
