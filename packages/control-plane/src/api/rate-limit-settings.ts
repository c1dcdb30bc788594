import { type StaticDecode, Type } from 'typebox';

/**
 * The `/v1` rate limits (docs/control-plane/README.md, "Rate limits"): requests per window,
 * counted by this process. The defaults are far above what the dashboard or a script polling a
 * deploy sends; they stop a runaway client or a flood, not ordinary use.
 */
export interface ApiRateLimitSettings {
  /** `REPLIX_API_RATE_LIMIT_WINDOW_S`: the window every limit counts in, in seconds. */
  readonly windowSeconds: number;
  /** `REPLIX_API_RATE_LIMIT_CREDENTIAL`: per management key, or per user for their tokens. */
  readonly perCredential: number;
  /** `REPLIX_API_RATE_LIMIT_ACCOUNT`: every credential of one account together. */
  readonly perAccount: number;
  /** `REPLIX_API_RATE_LIMIT_ADDRESS`: requests without a valid credential, per client address. */
  readonly perAddress: number;
}

function requestsVariable(defaultValue: number, description: string) {
  return Type.Integer({
    minimum: 1,
    default: defaultValue,
    problem: 'must be a positive integer',
    echo: true,
    description,
  });
}

/** The rate-limit variables of the control plane's environment. */
export const API_RATE_LIMIT_VARIABLE_SCHEMAS = {
  REPLIX_API_RATE_LIMIT_WINDOW_S: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 60,
    problem: 'must be an integer from 1 to 86400',
    echo: true,
    description: 'the window the /v1 rate limits count in, in seconds',
  }),
  REPLIX_API_RATE_LIMIT_CREDENTIAL: requestsVariable(
    3000,
    "/v1 requests per window of one management key, or of one user's tokens",
  ),
  REPLIX_API_RATE_LIMIT_ACCOUNT: requestsVariable(
    6000,
    '/v1 requests per window of all the credentials of one account',
  ),
  REPLIX_API_RATE_LIMIT_ADDRESS: requestsVariable(
    600,
    '/v1 requests per window without a valid credential, per client address',
  ),
};
const API_RATE_LIMIT_VARIABLES = Type.Object(API_RATE_LIMIT_VARIABLE_SCHEMAS);

export function apiRateLimitSettingsFrom(
  variables: StaticDecode<typeof API_RATE_LIMIT_VARIABLES>,
): ApiRateLimitSettings {
  return Object.freeze({
    windowSeconds: variables.REPLIX_API_RATE_LIMIT_WINDOW_S,
    perCredential: variables.REPLIX_API_RATE_LIMIT_CREDENTIAL,
    perAccount: variables.REPLIX_API_RATE_LIMIT_ACCOUNT,
    perAddress: variables.REPLIX_API_RATE_LIMIT_ADDRESS,
  });
}
