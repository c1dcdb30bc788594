export {
  BUILD_JOB_VARIABLES,
  type BuildJobOutcome,
  buildJobSettings,
  runBuildJob,
} from './builder/build-job.ts';
// The configuration and token issuer, also importable alone as `@replix/control-plane/config`.
export * from './config-surface.ts';
export { CONTROL_PLANE_ERRORS } from './domain/errors.ts';
export { BUILT_IN_ISSUER } from './identity/built-in-issuer.ts';
export {
  createControlPlaneLogger,
  type RunningControlPlane,
  startControlPlane,
} from './start-control-plane.ts';
export { createPglite } from './store/fresh-cluster-image.ts';
export { openStore } from './store/open-store.ts';
