export { MissingBinaryError } from './binaries.ts';
export {
  type DatabaseServer,
  type ServerOptions,
  type ServerTls,
  TLS_ONLY_PASSWORD,
  TLS_ONLY_USER,
} from './database-server.ts';
export { startDedicatedServer } from './dedicated-server.ts';
export { EventStreamReader, type ServerSentEvent } from './event-stream.ts';
export { freePort } from './free-port.ts';
export { type FreshAnswer, freshRequest } from './fresh-request.ts';
export {
  type FakeKubernetes,
  type RecordedRequest,
  type StoredObject,
  startFakeKubernetes,
} from './kubernetes/fake-api-server.ts';
export {
  type LocalOidc,
  type LocalOidcOptions,
  localOidcEmail,
  startLocalOidc,
} from './local-oidc.ts';
export { type LocalS3, type S3Event, startLocalS3, startPagingLocalS3 } from './local-s3.ts';
export { startMariaDb } from './mariadb-server.ts';
export { type CollectedSpan, type OtlpCollector, startOtlpCollector } from './otlp-collector.ts';
export { startPostgres } from './postgres-server.ts';
export { loadPagila } from './realdb/load-pagila.ts';
export { adaptSakilaSql, loadSakila } from './realdb/load-sakila.ts';
export {
  MissingSampleFileError,
  sampleDatabasesPresent,
  sampleDir,
} from './realdb/sample-files.ts';
export { sweepStaleRunDirs } from './run-dir.ts';
export type { DatabaseAdmin, TestDatabase } from './test-database.ts';
export { mariaDbAdmin, postgresAdmin } from './test-database.ts';
export type { TestServers } from './test-servers.ts';
export { startTestServers } from './test-servers.ts';
