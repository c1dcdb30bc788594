import { ENGINE_ERRORS, EngineError } from '@replix/engine';

/**
 * Every error the instance API answers with, one line of docs each.
 * `docs/instance-api.md` lists the same codes; a test keeps the two in step.
 */
export const INSTANCE_ERRORS = {
  ...ENGINE_ERRORS,
  unauthorized: {
    status: 401,
    doc: 'The Authorization header is missing or holds no valid API key.',
  },
  forbidden: {
    status: 403,
    doc: 'The API key is valid but lacks the scope the endpoint needs (an `admin` key for reload, replication, metrics and health detail).',
  },
  not_found: { status: 404, doc: 'No such endpoint.' },
  request_timeout: {
    status: 408,
    doc: 'The request was not received completely in time (`http.request_timeout_ms`).',
  },
  payload_too_large: { status: 413, doc: 'The query is larger than `query.max_body_bytes`.' },
  reload_busy: {
    status: 409,
    doc: 'A reload or sync flush is mid-cycle; retry once it completes.',
  },
  follow_restart: {
    status: 409,
    doc: "The leader's change feed does not hold this generation; load the checkpoint it names and ask again.",
  },
  cap_degraded: {
    status: 409,
    doc: 'The snapshot is over its memory cap; resize the instance instead of reloading.',
  },
  request_header_too_large: {
    status: 431,
    doc: 'The request line and headers are larger than `http.max_header_bytes`; send long queries with POST.',
  },
  too_many_requests: {
    status: 429,
    doc: 'The API key is over its rate limit, or too many queries are running or waiting on this instance; retry after the `Retry-After` seconds.',
  },
  bad_request: { status: 400, doc: 'The request is malformed (for example GET /query without q).' },
  service_unavailable: {
    status: 503,
    doc: "The database's endpoint has no serving instance (paused, terminated or not deployed yet); the message says which action brings it back.",
  },
  internal_error: {
    status: 500,
    doc: 'An internal failure; the response carries nothing internal.',
  },
} as const;

export type InstanceErrorCode = keyof typeof INSTANCE_ERRORS;

export class InstanceError extends Error {
  readonly code: InstanceErrorCode;
  readonly status: number;

  constructor(code: InstanceErrorCode, message: string) {
    super(message);
    this.name = 'InstanceError';
    this.code = code;
    this.status = INSTANCE_ERRORS[code].status;
  }
}

/** Maps any thrown value to the status and `{error:{code,message}}` envelope, in one place. */
export function errorResponse(error: unknown): {
  status: number;
  body: { error: { code: string; message: string } };
} {
  if (error instanceof InstanceError || error instanceof EngineError) {
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
  return {
    status: 500,
    body: {
      error: {
        code: 'internal_error',
        message: 'Internal error. The request id in the logs identifies it.',
      },
    },
  };
}
