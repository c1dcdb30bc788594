/** The audience of the built-in issuer's tokens (and the default `REPLIX_OIDC_AUDIENCE`). */
export const BUILT_IN_AUDIENCE = 'replix';
