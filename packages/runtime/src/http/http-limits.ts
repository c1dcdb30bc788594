/**
 * The limits of the instance's HTTP server, enforced by Node before a request reaches a route
 * (docs/limits.md lists them). Refusals answer with the error envelope
 * (`client-error-response.ts`).
 */
export const HTTP_LIMITS = {
  /**
   * Request line plus headers, in bytes: 431 `request_header_too_large` over it. Room for a GET
   * of a query of the default `query.max_body_bytes` (64 KiB) even when every byte is
   * URL-encoded (3 bytes each, 192 KiB), plus 64 KiB of other headers.
   */
  max_header_bytes: 256 * 1024,
  /** Time to receive the request line and headers: 408 `request_timeout` after it. */
  headers_timeout_ms: 20_000,
  /** Time to receive the whole request, body included: 408 `request_timeout` after it. */
  request_timeout_ms: 30_000,
  /**
   * On SIGTERM the instance stops accepting, closes idle connections and lets the requests in
   * flight finish; those still running after this are cut, so a stop never hangs (the process
   * driver kills an instance 10 s after SIGTERM).
   */
  drain_timeout_ms: 8_000,
  /**
   * How long a response with bytes waiting may go without its client taking any of them
   * (`send-watch.ts`): then its connection is destroyed, freeing what it held, so a client that
   * asks and never reads holds an answer's bytes for seconds, not for as long as it stays.
   */
  send_timeout_ms: 5_000,
  /**
   * How often Node looks for requests over their timeout (its default is 30 s, which would let
   * a timeout fire up to 30 s late).
   */
  timeout_check_interval_ms: 1_000,
} as const;

export type HttpLimits = { readonly [Name in keyof typeof HTTP_LIMITS]: number };
