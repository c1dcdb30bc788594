export {
  BUILT_IN_ISSUER,
  BuiltInIssuer,
  LOGIN_LINK_TTL_SECONDS,
} from './auth/built-in-issuer.ts';
export {
  BUILD_JOB_VARIABLES,
  type BuildJobOutcome,
  buildJobSettings,
  runBuildJob,
} from './builder/build-job.ts';
export {
  CONTROL_PLANE_VARIABLES,
  type ControlPlaneConfig,
  type ControlPlaneOverrides,
  dataDirOf,
  resolveControlPlaneConfig,
} from './config.ts';
export { CONTROL_PLANE_ERRORS } from './errors.ts';
export { ROLE_NAMES, type RoleName } from './roles/role.ts';
export {
  createControlPlaneLogger,
  type RunningControlPlane,
  startControlPlane,
} from './start-control-plane.ts';
export { openStore } from './store/open-store.ts';
