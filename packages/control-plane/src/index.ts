export { lockDataFolder } from './adapters/store/data-folder-lock.ts';
export { createPglite, createSeededPglite } from './adapters/store/fresh-cluster-image.ts';
export { openStore } from './adapters/store/open-store.ts';
export {
  BUILD_JOB_VARIABLES,
  type BuildJobOutcome,
  buildJobSettings,
  runBuildJob,
} from './application/builder/build-job.ts';
export { BUILT_IN_ISSUER } from './application/identity/built-in-issuer.ts';
export { buildJobStoreConfig } from './config.ts';
// The configuration and token issuer, also importable alone as `@replix/control-plane/config`.
export * from './config-surface.ts';
export { CONTROL_PLANE_ERRORS } from './domain/errors.ts';
export {
  createControlPlaneLogger,
  type RunningControlPlane,
  startControlPlane,
} from './start-control-plane.ts';
