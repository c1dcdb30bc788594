export {
  ARTIFACT_VARIABLES,
  type ArtifactLaunchConfig,
  applyLaunchOverrides,
  resolveArtifactConfig,
} from './artifact-config.ts';
export { artifactEntryPoint } from './artifact-entry-point.ts';
export type { RunArtifactOptions, runArtifact } from './artifact-main.ts';
export { errorResponse, INSTANCE_ERRORS, InstanceError, type InstanceErrorCode } from './errors.ts';
export { ApiKeyVerifier, scopeGrants } from './http/api-keys.ts';
export { KEYS_FILE_POLL_MS, readKeysFile, watchKeysFile } from './http/keys-file-watcher.ts';
export { generateOpenApi } from './http/openapi.ts';
export { buildInstanceServer, type InstanceServerOptions } from './http/server.ts';
export {
  type InstanceConfig,
  type InstanceConfigInput,
  resolveInstanceConfig,
  SERVE_VARIABLES,
} from './instance-config.ts';
export { ChangeFollower } from './replication/change-follower.ts';
export { mapChanges, type RowFetcher } from './replication/change-mapper.ts';
export { SyncScheduler } from './replication/sync-scheduler.ts';
export { withMemorySize } from './snapshot/instance-memory.ts';
export { type HealthStatus, SnapshotController } from './snapshot/snapshot-controller.ts';
export {
  type LoadOptions,
  type LoadProgress,
  loadSnapshot,
  loadThreadsForCores,
  MAX_LOAD_THREADS,
  sourceColumnsOf,
} from './snapshot/snapshot-loader.ts';
export {
  createLogger,
  type RunningInstance,
  type StartInstanceOptions,
  startInstance,
} from './start-instance.ts';
export { sourceBuildHash } from './version.ts';

/**
 * The S3 SDK the checkpoints are kept with, loaded only when called: the control plane's
 * Kubernetes driver removes a database's checkpoints from the bucket with it, and loading this
 * module does not load it.
 */
export const loadS3Sdk = () => import('@aws-sdk/client-s3');
