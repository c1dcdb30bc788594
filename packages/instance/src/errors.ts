import { ENGINE_ERRORS, EngineError } from '@replix/engine';

/**
 * Every error the instance API answers with (spec §7, instance table), one line of docs each.
 * `docs/instance-api.md` lists the same codes; a test keeps the two in step.
 */
export const INSTANCE_ERRORS = {
  ...ENGINE_ERRORS,
  unauthorized: {
    status: 401,
    doc: 'The Authorization header is missing or holds no valid API key.',
  },
  not_found: { status: 404, doc: 'No such endpoint.' },
  payload_too_large: { status: 413, doc: 'The query is larger than `query.max_body_bytes`.' },
  reload_busy: {
    status: 409,
    doc: 'A reload or sync flush is mid-cycle; retry once it completes.',
  },
  cap_degraded: {
    status: 409,
    doc: 'The snapshot is over its memory cap; resize the instance instead of reloading.',
  },
  bad_request: { status: 400, doc: 'The request is malformed (for example GET /query without q).' },
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
