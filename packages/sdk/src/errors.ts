/**
 * Errors as classes by the instance's `error.code` (docs/instance-api.md, "Errors"): catch a
 * family with `instanceof`, or switch on `code`. Every class is a `ReplixError`.
 */

/** The codes an instance answers with; a newer instance may send others. */
export type ReplixErrorCode =
  | 'parse_error'
  | 'executor_error'
  | 'unknown_table'
  | 'query_too_complex'
  | 'query_timeout'
  | 'too_many_rows'
  | 'response_too_large'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'request_timeout'
  | 'payload_too_large'
  | 'reload_busy'
  | 'cap_degraded'
  | 'follow_restart'
  | 'request_header_too_large'
  | 'too_many_requests'
  | 'service_unavailable'
  | 'internal_error'
  /** The SDK's own: 503 with the status document of an instance still loading or failed. */
  | 'starting'
  /** The SDK's own: the instance could not be reached (status 0). */
  | 'connection_failed'
  /** The SDK's own: an answer that is not the API's JSON. */
  | 'invalid_response';

export class ReplixError extends Error {
  override name = 'ReplixError';
  /** The envelope's `error.code` (or one of the SDK's own codes); an unknown code is kept as sent. */
  readonly code: ReplixErrorCode | (string & {});
  /** The HTTP status; 0 when no answer arrived. */
  readonly status: number;
  constructor(code: string, status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.status = status;
  }
}

/** The query is not valid syntax; the message has its line, column and a caret excerpt. */
export class ReplixParseError extends ReplixError {
  override name = 'ReplixParseError';
}

/** The query does not fit the schema: unknown field, wrong value type, misuse of AFTER. */
export class ReplixQueryError extends ReplixError {
  override name = 'ReplixQueryError';
}

/** The queried table is not in the schema. */
export class ReplixUnknownTableError extends ReplixError {
  override name = 'ReplixUnknownTableError';
}

/** Over a limit: structure, time, rows, response or request size. Narrow it or page with AFTER. */
export class ReplixLimitError extends ReplixError {
  override name = 'ReplixLimitError';
}

/** The key is missing, invalid or revoked (401), or lacks the scope (403). */
export class ReplixAuthError extends ReplixError {
  override name = 'ReplixAuthError';
}

/**
 * Not serving now (429 or 503): the SDK retried as long as it was allowed to. `retryAfterMs`
 * is what the answer asked for, when it did.
 */
export class ReplixUnavailableError extends ReplixError {
  override name = 'ReplixUnavailableError';
  readonly retryAfterMs: number | undefined;
  constructor(code: string, status: number, message: string, retryAfterMs?: number) {
    super(code, status, message);
    this.retryAfterMs = retryAfterMs;
  }
}

/** No answer, or an answer that is not the API's: the instance is unreachable or not Replix. */
export class ReplixConnectionError extends ReplixError {
  override name = 'ReplixConnectionError';
}

type ErrorClass = new (code: string, status: number, message: string) => ReplixError;

/** Which class each code of the instance's catalogue is thrown as; others are `ReplixError`. */
export const ERROR_CLASSES: Readonly<Record<string, ErrorClass>> = {
  parse_error: ReplixParseError,
  executor_error: ReplixQueryError,
  bad_request: ReplixQueryError,
  unknown_table: ReplixUnknownTableError,
  query_too_complex: ReplixLimitError,
  query_timeout: ReplixLimitError,
  too_many_rows: ReplixLimitError,
  response_too_large: ReplixLimitError,
  payload_too_large: ReplixLimitError,
  request_header_too_large: ReplixLimitError,
  unauthorized: ReplixAuthError,
  forbidden: ReplixAuthError,
  too_many_requests: ReplixUnavailableError,
  service_unavailable: ReplixUnavailableError,
  starting: ReplixUnavailableError,
  not_found: ReplixError,
  request_timeout: ReplixError,
  reload_busy: ReplixError,
  cap_degraded: ReplixError,
  follow_restart: ReplixError,
  internal_error: ReplixError,
};

/** The error for an envelope's code and message. */
export function errorFor(code: string, status: number, message: string): ReplixError {
  const ErrorClass = Object.hasOwn(ERROR_CLASSES, code) ? ERROR_CLASSES[code]! : ReplixError;
  return new ErrorClass(code, status, message);
}
