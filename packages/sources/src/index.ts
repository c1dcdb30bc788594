export type {
  SnapshotReader,
  SourceConnector,
  SourceEngine,
  TableReadRequest,
} from './connector.ts';
export { connectorFromUrl } from './connector-from-url.ts';
export {
  SourceConfigError,
  SourceConnectionError,
  SourceError,
  type SourceErrorCode,
  SourceQueryError,
  type SourceTarget,
} from './errors.ts';
export type { MySqlConnectorOptions } from './mysql/mysql-connection-options.ts';
export { MySqlConnector } from './mysql/mysql-connector.ts';
export { parseSourceUrl, type SourceUrl } from './parse-source-url.ts';
export type { PostgresConnectorOptions } from './postgres/postgres-connection-options.ts';
export { PostgresConnector } from './postgres/postgres-connector.ts';
export { DEFAULT_BATCH_SIZE } from './read-request.ts';
