import {
  connectorFromUrl,
  openSshTunnel,
  parseSourceUrl,
  type SourceConnector,
  SourceError,
  type SourceTlsMode,
  type SshTunnel,
  sourceDialect,
  sourceUrlThroughTunnel,
  tlsUrlParams,
} from '@replix/sources';
import type { Selectable } from 'kysely';
import type { SshTunnelLaunch } from '../../adapters/drivers/instance-launch.ts';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { ApiError } from '../../domain/errors.ts';
import { splitSourceSchema } from '../../domain/source-schema-name.ts';
import { sourcePassword } from './source-password.ts';

/** How to reach a database's source: the URL `connectorFromUrl` takes, and the tunnel to open. */
export interface ConnectionTarget {
  readonly sourceUrl: string;
  readonly ssh: SshTunnelLaunch | undefined;
  /** Names the source's replication state (PostgreSQL slot and publication) for the connector. */
  readonly replicationId?: string | undefined;
}

/** The settings of a connection that reach its source (a launch's copy has the same). */
export type SourceSettings = Pick<
  Selectable<ConnectionTable>,
  | 'backend'
  | 'host'
  | 'port'
  | 'username'
  | 'password_enc'
  | 'tls_mode'
  | 'ssh'
  | 'ssh_private_key_enc'
>;

/** An IPv6 address goes in brackets in a URL. */
function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * The source URL of a connection for one source schema, credentials opened and URL-encoded:
 * `mysql://user:pass@host:port/schema?sslmode=…`, `postgres://…/database?schema=…&sslmode=…`,
 * `mssql://…/database?schema=…&encrypt=…&trustServerCertificate=…`. Without a schema it names
 * the server's own database (`information_schema`, `postgres`, `master`), for server-level
 * work. Passwords and keys are only ever opened here.
 */
export function connectionTarget(
  connection: SourceSettings,
  secrets: SecretBox,
  schema: string | undefined,
): ConnectionTarget {
  const dialect = sourceDialect(connection.backend);
  const { database, schema: sourceSchema } = splitSourceSchema(dialect.backend, schema);
  const user = encodeURIComponent(connection.username);
  const password = sourcePassword(connection, secrets);
  // A user without a password is written `user@host`, as `replix serve --source` takes it.
  const login = password === '' ? user : `${user}:${encodeURIComponent(password)}`;
  const params = new URLSearchParams();
  if (sourceSchema !== undefined) params.set('schema', sourceSchema);
  const tls = tlsUrlParams(dialect, connection.tls_mode as SourceTlsMode);
  for (const [name, value] of Object.entries(tls)) params.set(name, value);
  const query = params.size > 0 ? `?${params.toString()}` : '';
  const sourceUrl = `${dialect.urlSchemes[0]}://${login}@${urlHost(connection.host)}:${connection.port}/${encodeURIComponent(database)}${query}`;
  const ssh =
    connection.ssh && connection.ssh_private_key_enc
      ? {
          host: connection.ssh.host,
          port: connection.ssh.port,
          user: connection.ssh.user,
          privateKey: secrets.open(connection.ssh_private_key_enc),
        }
      : undefined;
  return { sourceUrl, ssh };
}

/**
 * A source failure as the API reports it: `source_unavailable` with the connector's message,
 * which by contract names no host, user or password. Anything else is passed on as it is.
 */
export function sourceApiError(error: unknown): unknown {
  if (error instanceof SourceError) return new ApiError('source_unavailable', error.message);
  return error;
}

/**
 * Runs `work` with a connector for the target: opens the SSH tunnel first when there is one
 * (the URL then points at the tunnel's local end), and always closes connector and tunnel.
 * Source errors become `source_unavailable` (see `sourceApiError`).
 */
export async function withSourceConnector<T>(
  target: ConnectionTarget,
  work: (connector: SourceConnector) => Promise<T>,
): Promise<T> {
  let tunnel: SshTunnel | undefined;
  let connector: SourceConnector | undefined;
  try {
    let url = target.sourceUrl;
    if (target.ssh) {
      const { host, port } = parseSourceUrl(url).options;
      tunnel = await openSshTunnel(target.ssh, { host, port });
      url = sourceUrlThroughTunnel(url, tunnel);
    }
    connector = connectorFromUrl(url, { replicationId: target.replicationId });
    return await work(connector);
  } catch (error) {
    throw sourceApiError(error);
  } finally {
    await connector?.close().catch(() => {});
    await tunnel?.close();
  }
}
