export type {
  SnapshotOptions,
  SnapshotReader,
  SourceBackend,
  SourceConnector,
  TableReadRequest,
} from './connector.ts';
export { type ConnectorOptions, connectorFromUrl } from './connector-from-url.ts';
export {
  PositionExpiredError,
  ReplicationError,
  SourceConfigError,
  SourceConnectionError,
  SourceError,
  type SourceErrorCode,
  SourceQueryError,
  type SourceTarget,
} from './errors.ts';
export { joinSnapshot } from './join-snapshot.ts';
export type { MsSqlConnectorOptions } from './mssql/mssql-connection-options.ts';
export { MsSqlConnector } from './mssql/mssql-connector.ts';
export { enumValues } from './mysql/mysql-binlog-layout.ts';
export type { MySqlConnectorOptions } from './mysql/mysql-connection-options.ts';
export { MySqlConnector } from './mysql/mysql-connector.ts';
export { parseSourceUrl, type SourceUrl } from './parse-source-url.ts';
export type { PostgresConnectorOptions } from './postgres/postgres-connection-options.ts';
export { PostgresConnector } from './postgres/postgres-connector.ts';
export { DEFAULT_BATCH_SIZE } from './read-request.ts';
export type {
  ChangeBatch,
  ChangeStreamRequest,
  ReplicationPosition,
  ReplicationReadiness,
  SourceChange,
} from './replication.ts';
export { KEYS_PER_QUERY, type RowsRequest } from './rows-request.ts';
export type {
  ChangeLogReadiness,
  ServerProbe,
  ServerProbeReport,
  ServerProbeTarget,
} from './server-probe.ts';
export { serverProbeFor } from './server-probe-for.ts';
export type {
  MySqlSnapshotShare,
  PostgresSnapshotShare,
  SnapshotShare,
} from './snapshot-share.ts';
export {
  backendOfUrlScheme,
  DEFAULT_SOURCE_BACKEND,
  isSourceBackend,
  type ReplicationState,
  SOURCE_BACKENDS,
  SOURCE_DIALECTS,
  SOURCE_TLS_MODES,
  type SourceDialect,
  type SourceTlsMode,
  sourceDialect,
  tlsUrlParams,
} from './source-dialect.ts';
export { type SourceTls, sourceUrlThroughTunnel } from './source-tls.ts';
export {
  openSshTunnel,
  type SshTunnel,
  SshTunnelError,
  type SshTunnelOptions,
  type SshTunnelTarget,
} from './ssh-tunnel.ts';
export {
  schemaConfigWhereProblems,
  type WhereConfigIssue,
} from './where/schema-config-where-problems.ts';
export { validateWherePredicate } from './where/validate-where-predicate.ts';
export type { WhereProblem } from './where/where-dialect.ts';
export { protocolMismatch, type WireProtocol, wireProtocolAt } from './wire-protocol.ts';
