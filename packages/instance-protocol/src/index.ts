/**
 * `@replix/instance-protocol`: what the control plane and an instance agree on, below both. The
 * artifact a build writes and an instance runs (`artifact-manifest.ts`); API keys, derived by the
 * control plane and verified by the instance (`api-keys.ts`); the environment an instance is launched
 * with (`launch-variables.ts`) and its memory flags (`launch-memory.ts`); and the instance's HTTP API as the control plane calls it: the
 * client (`instance-client.ts`) and its Prometheus metrics read back (`parse-instance-metrics.ts`).
 */
export {
  type AllowedKeyIds,
  API_KEY_PATTERN,
  apiKeyMac,
  deriveApiKey,
  type KeyScope,
  newKeyId,
  newKeySecret,
} from './api-keys.ts';
export { ARTIFACT_FILES, type ArtifactManifest } from './artifact-manifest.ts';
export { healthStatusOf, InstanceClient, type InstanceResponse } from './instance-client.ts';
export {
  HEAP_SHARE,
  heapFlags,
  heapIsBounded,
  INSTANCE_MALLOC_ENVIRONMENT,
  MIN_MEMORY_MB,
  memorySizeMb,
} from './launch-memory.ts';
export { type LaunchVariables, launchVariables } from './launch-variables.ts';
export { type InstanceMetricsReport, parseInstanceMetrics } from './parse-instance-metrics.ts';
