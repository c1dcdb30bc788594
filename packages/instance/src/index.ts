export {
  type AllowedKeyIds,
  ApiKeyVerifier,
  deriveApiKey,
  type KeyScope,
  newKeyId,
  newKeySecret,
  scopeGrants,
} from './api-keys.ts';
export {
  ARTIFACT_VARIABLES,
  type ArtifactLaunchConfig,
  applyLaunchOverrides,
  resolveArtifactConfig,
} from './artifact-config.ts';
export type { RunArtifactOptions, runArtifact } from './artifact-main.ts';
export { type ArtifactManifest, artifactEntryPoint } from './artifact-manifest.ts';
export { createClientErrorHandler } from './client-error-response.ts';
// The configuration and launch helpers, also importable alone as `@replix/instance/config`.
export * from './config-surface.ts';
export { errorResponse, INSTANCE_ERRORS, InstanceError, type InstanceErrorCode } from './errors.ts';
export { HTTP_LIMITS, type HttpLimits } from './http-limits.ts';
export {
  type InstanceConfig,
  type InstanceConfigInput,
  resolveInstanceConfig,
  SERVE_VARIABLES,
} from './instance-config.ts';
export { HEAP_SHARE, withMemorySize } from './instance-memory.ts';
export { KEYS_FILE_POLL_MS, readKeysFile, watchKeysFile } from './keys-file-watcher.ts';
export { generateOpenApi } from './openapi.ts';
export { ChangeFollower } from './replication/change-follower.ts';
export { mapChanges, type RowFetcher } from './replication/change-mapper.ts';
export { SyncScheduler } from './replication/sync-scheduler.ts';
export { buildInstanceServer, type InstanceServerOptions } from './server.ts';
export { errorForLog, type LoggedError, serviceLogger } from './service-logger.ts';
export { type HealthStatus, SnapshotController } from './snapshot-controller.ts';
export {
  type LoadOptions,
  type LoadProgress,
  loadSnapshot,
  loadThreadsForCores,
  MAX_LOAD_THREADS,
  sourceColumnsOf,
} from './snapshot-loader.ts';
export {
  createLogger,
  type RunningInstance,
  type StartInstanceOptions,
  startInstance,
} from './start-instance.ts';
// Traces, also importable alone as `@replix/instance/tracing`.
export * from './tracing-surface.ts';
export { RELEASE, sourceBuildHash } from './version.ts';
