import type { SourceConnector } from './connector.ts';
import { MsSqlConnector } from './mssql/mssql-connector.ts';
import { MySqlConnector } from './mysql/mysql-connector.ts';
import { parseSourceUrl } from './parse-source-url.ts';
import { PostgresConnector } from './postgres/postgres-connector.ts';

/**
 * The connector for a source URL: `mysql://user:pass@host:port/db` (MySQL and MariaDB),
 * `postgres://user:pass@host:port/db?schema=name` (`postgresql://` too) or
 * `mssql://user:pass@host:port/db?schema=name` (`sqlserver://` too). Throws a
 * `SourceConfigError` (`unsupported_source`, `invalid_source_url`) whose message never quotes
 * the URL. Nothing connects until the connector is used.
 */
export function connectorFromUrl(url: string, options: ConnectorOptions = {}): SourceConnector {
  const source = parseSourceUrl(url);
  if (source.backend === 'mssql') return new MsSqlConnector(source.options);
  return source.backend === 'mysql'
    ? new MySqlConnector(source.options)
    : new PostgresConnector({ ...source.options, replicationId: options.replicationId });
}

export interface ConnectorOptions {
  /**
   * Names what change data capture keeps on the source for one instance (PostgreSQL: slot and
   * publication `replix_<replicationId>`); lowercase letters, digits and `_`. Without it, a
   * name derived from the source's address, database and schema.
   */
  readonly replicationId?: string | undefined;
}
