/**
 * `@replix/control-plane/config`: the control plane's configuration and its token issuer
 * alone, without the API server, the store, the drivers or the billing and Kubernetes
 * clients behind the package's main entry. A CLI command that only reads its variables or
 * signs a token imports this and starts in a fraction of the time.
 */

export { BuiltInIssuer, LOGIN_LINK_TTL_SECONDS } from './application/identity/built-in-issuer.ts';
export {
  CONTROL_PLANE_VARIABLES,
  type ControlPlaneConfig,
  type ControlPlaneOverrides,
  dataDirOf,
  resolveControlPlaneConfig,
} from './config.ts';
export { ROLE_NAMES, type RoleName } from './domain/role-names.ts';
