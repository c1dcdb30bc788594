import { SourceConfigError } from './errors.ts';
import type { MsSqlConnectorOptions } from './mssql/mssql-connection-options.ts';
import { msSqlUrlOptions } from './mssql/mssql-url-options.ts';
import type { MySqlConnectorOptions } from './mysql/mysql-connection-options.ts';
import type { PostgresConnectorOptions } from './postgres/postgres-connection-options.ts';
import { backendOfUrlScheme, SOURCE_DIALECTS } from './source-dialect.ts';
import { tlsFromUrlParams } from './source-tls.ts';

/** A parsed source URL: the backend and the options for its connector. */
export type SourceUrl =
  | { readonly backend: 'mysql'; readonly options: MySqlConnectorOptions }
  | { readonly backend: 'postgres'; readonly options: PostgresConnectorOptions }
  | { readonly backend: 'mssql'; readonly options: MsSqlConnectorOptions };

function invalid(reason: string): SourceConfigError {
  return new SourceConfigError('invalid_source_url', `The source URL ${reason}.`);
}

/** A percent-decoded URL part; malformed escapes are a config error, not a URIError. */
function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(`has a malformed ${what}`);
  }
}

/**
 * Parses a source URL: `mysql://user:pass@host:port/db` (MySQL and MariaDB),
 * `postgres://user:pass@host:port/db?schema=name` (`postgresql://` too; schema defaults to
 * `public`) — both take `sslmode=disable|prefer|require|verify-full` (default `prefer`),
 * `sslrootcert=<CA file>` and `sslservername=<name>` (see `tlsFromUrlParams`) — or `mssql://user:pass@host:port/db?schema=name` (`sqlserver://` too; see
 * `msSqlUrlOptions`). User, password and database are percent-decoded. Errors never quote the
 * URL, since it carries the password.
 */
export function parseSourceUrl(url: string): SourceUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Node's own error quotes the input, password included.
    throw invalid('is not a valid URL');
  }
  const scheme = parsed.protocol.slice(0, -1).toLowerCase();
  const backend = backendOfUrlScheme(scheme);
  if (backend === undefined) {
    throw new SourceConfigError(
      'unsupported_source',
      `Unsupported source URL scheme "${scheme}:"; use mysql://, postgres:// or mssql://.`,
    );
  }
  // WHATWG URL keeps IPv6 hosts in brackets; drivers want the bare address.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw invalid('names no host');
  const user = decoded(parsed.username, 'user name');
  if (user === '') throw invalid('names no user');
  const password = parsed.password === '' ? undefined : decoded(parsed.password, 'password');
  const database = decoded(parsed.pathname.replace(/^\//, ''), 'database name');
  if (database === '' || database.includes('/')) throw invalid('must name one database');
  const dialect = SOURCE_DIALECTS[backend];
  const port = parsed.port === '' ? dialect.defaultPort : Number(parsed.port);

  // MySQL and PostgreSQL read libpq's TLS parameters; SQL Server has its own (encrypt, …).
  const tls = dialect.tlsUrlStyle === 'sslmode' ? tlsFromUrlParams(parsed.searchParams) : undefined;
  const tlsOption = tls === undefined ? {} : { tls };
  if (backend === 'mysql') {
    return { backend, options: { host, port, user, password, database, ...tlsOption } };
  }
  if (backend === 'mssql') {
    const basics = { host, port, user, password, database };
    return { backend, options: msSqlUrlOptions(parsed.searchParams, basics) };
  }
  const schema = parsed.searchParams.get('schema') ?? 'public';
  if (schema === '') throw invalid('names an empty schema');
  return { backend, options: { host, port, user, password, database, schema, ...tlsOption } };
}
