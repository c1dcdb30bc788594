import type { SourceConnector } from './connector.ts';
import { MySqlConnector } from './mysql/mysql-connector.ts';
import { parseSourceUrl } from './parse-source-url.ts';
import { PostgresConnector } from './postgres/postgres-connector.ts';

/**
 * The connector for a source URL: `mysql://user:pass@host:port/db` (MySQL and MariaDB) or
 * `postgres://user:pass@host:port/db?schema=name` (`postgresql://` too). Throws a
 * `SourceConfigError` (`unsupported_source`, `invalid_source_url`) whose message never quotes
 * the URL. Nothing connects until the connector is used.
 */
export function connectorFromUrl(url: string): SourceConnector {
  const source = parseSourceUrl(url);
  return source.engine === 'mysql'
    ? new MySqlConnector(source.options)
    : new PostgresConnector(source.options);
}
