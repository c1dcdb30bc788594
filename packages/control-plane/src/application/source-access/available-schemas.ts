import { type SourceBackend, type SourceTlsMode, sourceDialect } from '@replix/sources';
import type { Selectable } from 'kysely';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { splitSourceSchema } from '../../domain/source-schema-name.ts';
import { sourcePassword } from './source-password.ts';
import { testConnection } from './test-connection.ts';

/** The dashboard polls the instance status every few seconds; the source is asked once a minute. */
const CACHE_MS = 60_000;
/** The status endpoint must answer quickly even when the source is slow or gone. */
const PROBE_TIMEOUT_MS = 3000;

type ConnectionRow = Selectable<ConnectionTable>;

const cache = new Map<string, { readonly at: number; readonly schemas: Promise<string[]> }>();

/** The connection test's probe (through the SSH tunnel when there is one). */
async function probeSchemas(
  connection: ConnectionRow,
  secrets: SecretBox,
  loginDatabase: string | undefined,
): Promise<string[]> {
  const result = await testConnection({
    backend: connection.backend as SourceBackend,
    host: connection.host,
    port: connection.port,
    user: connection.username,
    password: sourcePassword(connection, secrets),
    database: loginDatabase,
    tlsMode: connection.tls_mode as SourceTlsMode,
    ssh:
      connection.ssh && connection.ssh_private_key_enc
        ? { ...connection.ssh, privateKey: secrets.open(connection.ssh_private_key_enc) }
        : undefined,
  });
  return result.availableSchemas ?? [];
}

/**
 * The schemas the connection's user can see on the source, for the dashboard's schema picker;
 * [] when the source does not answer within a few seconds. Cached per connection (and per
 * version of it, so an edited connection is asked again) for a minute; failures too, so a
 * source that is down is not hammered by every poll.
 */
export function availableSchemas(
  connection: ConnectionRow,
  secrets: SecretBox,
  sourceSchema: string,
): Promise<string[]> {
  // Where connections log in to a database (PostgreSQL, SQL Server): the one this database
  // reads from (the server's default one may be closed to the user). MySQL needs none.
  const loginDatabase =
    sourceDialect(connection.backend).loginDatabase === undefined
      ? undefined
      : splitSourceSchema(connection.backend, sourceSchema).database;
  const key = `${connection.id}@${connection.updated_at.getTime()}/${loginDatabase ?? ''}`;
  const now = Date.now();
  const cached = cache.get(key);
  if (cached && now - cached.at < CACHE_MS) return cached.schemas;
  for (const [stale, entry] of cache) if (now - entry.at >= CACHE_MS) cache.delete(stale);
  const probe = probeSchemas(connection, secrets, loginDatabase).catch(() => []);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), PROBE_TIMEOUT_MS);
    timer.unref();
  });
  const schemas = Promise.race([probe, timeout]).finally(() => clearTimeout(timer));
  const entry = { at: now, schemas };
  cache.set(key, entry);
  // A slow source that answers after the timeout still fills the cache for the next poll.
  void probe.then((late) => {
    if (cache.get(key) === entry) cache.set(key, { at: now, schemas: Promise.resolve(late) });
  });
  return schemas;
}
