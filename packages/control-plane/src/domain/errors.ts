/**
 * The control plane's error catalogue: every error string the API returns, with its HTTP status
 * and what it means. docs/control-plane/errors.md lists the same table; test/error-docs.test.ts
 * keeps them equal.
 * Responses use the flat envelope `{error, message}` (spec §7).
 */
export const CONTROL_PLANE_ERRORS = {
  validation_failed: {
    status: 400,
    doc: 'The request body, path or query failed validation; the message names the field.',
  },
  invalid_signature: {
    status: 400,
    doc: "A payment provider's webhook has no signature, or one that does not verify against the endpoint secret, or one too old.",
  },
  invalid_schema_config: {
    status: 400,
    doc: "The database's schema config is invalid; the message names the key path.",
  },
  unauthorized: {
    status: 401,
    doc: 'No bearer token, or one that is expired, malformed, revoked or not signed by the configured issuer.',
  },
  second_factor_required: {
    status: 401,
    doc: 'The user has two-factor authentication on and the token lacks the second factor; exchange it at `POST /v1/auth/2fa/verify`.',
  },
  too_many_attempts: {
    status: 429,
    doc: 'Too many wrong second-factor codes (5 in 15 minutes); wait and try again.',
  },
  too_many_requests: {
    status: 429,
    doc: 'The credential, its account or (without a valid credential) the client address is over its `/v1` rate limit; retry after `Retry-After` seconds. The `RateLimit` and `RateLimit-Policy` fields say which limit and where it stands.',
  },
  forbidden: {
    status: 403,
    doc: 'The token is valid but may not do this (admin routes need the `service-admins` group; team roles limit the rest).',
  },
  not_found: {
    status: 404,
    doc: "No such resource in the caller's account (another account's resources are reported the same way).",
  },
  connection_test_failed: {
    status: 422,
    doc: 'Saving or changing a connection tested it first and the test failed; nothing was saved. `test` in the body is the test result (`failedCheck` says which check, `error` why). Fix the settings, or send `skipTest: true` to save it anyway.',
  },
  action_not_allowed: {
    status: 409,
    doc: "The action is not allowed in the database's current state; the message gives the reason from the allowed-actions matrix.",
  },
  conflict: {
    status: 409,
    doc: 'The request conflicts with the current state of another resource (for example deleting a connection that databases still use).',
  },
  plan_limit: {
    status: 403,
    doc: "The account's plan does not allow this (number of databases, compute units, instance size, region, overage).",
  },
  instance_unavailable: {
    status: 503,
    doc: "The database's instance is not running or did not answer; retry when its status is `running`.",
  },
  payment_provider_unavailable: {
    status: 502,
    doc: 'The payment provider could not be reached or refused the request; nothing changed, retry later.',
  },
  source_unavailable: {
    status: 502,
    doc: 'The source database could not be reached or refused the credentials; the message says which.',
  },
  not_ready: {
    status: 503,
    doc: "This control-plane process is not ready (`/ready`: its store did not answer, or a role's loop has not completed a pass recently) or its loop is stuck (`/live`); the message says which.",
  },
  payload_too_large: {
    status: 413,
    doc: 'The request body is larger than the API accepts (1 MiB).',
  },
  internal_error: {
    status: 500,
    doc: 'An unexpected failure. Nothing internal is disclosed; the request id in the logs finds it.',
  },
} as const satisfies Record<string, { status: number; doc: string }>;

export type ControlPlaneErrorCode = keyof typeof CONTROL_PLANE_ERRORS;

/** An error the API reports as `{error: code, message}` with the catalogue's status. */
export class ApiError extends Error {
  readonly code: ControlPlaneErrorCode;
  readonly status: number;
  /** Fields the envelope carries beside `error` and `message` (the route declares them). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(
    code: ControlPlaneErrorCode,
    message: string,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = CONTROL_PLANE_ERRORS[code].status;
    this.details = details;
  }
}

export const notFound = (what: string): ApiError => new ApiError('not_found', `${what} not found.`);
