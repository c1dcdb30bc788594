import { Buffer } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpLimits } from './http-limits.ts';

/**
 * The refusals made before a request reaches its route, with their statuses. The instance's
 * error catalogue (`INSTANCE_ERRORS`) has the same codes with the same statuses; a database's
 * endpoint router answers with them too.
 */
export const REFUSAL_STATUS = {
  bad_request: 400,
  request_timeout: 408,
  request_header_too_large: 431,
} as const;

export type RefusalCode = keyof typeof REFUSAL_STATUS;

/** What Node reports on a connection (`clientError`): a parser error code or a timeout. */
interface ClientError {
  readonly code?: string;
}

/** The refusal for a request Node's HTTP parser or timeouts stopped, or null to just close. */
export function clientErrorRefusal(
  error: ClientError,
  limits: HttpLimits,
): { code: RefusalCode; message: string } | null {
  switch (error.code) {
    case 'ECONNRESET':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_header_too_large',
        message: `The request line and headers are larger than ${limits.max_header_bytes} bytes; send long queries with POST /query.`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        code: 'request_timeout',
        message: `The request was not received in time: headers within ${limits.headers_timeout_ms / 1000} s, the whole request within ${limits.request_timeout_ms / 1000} s.`,
      };
    default:
      return { code: 'bad_request', message: 'The request is not valid HTTP/1.1.' };
  }
}

/** The raw HTTP/1.1 response carrying the error envelope; the connection closes after it. */
export function clientErrorResponse(
  refusal: { code: RefusalCode; message: string },
  version: string,
): string {
  const status = REFUSAL_STATUS[refusal.code];
  const body = JSON.stringify({ error: refusal });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Service-Version: ${version}`,
    // Browsers may read the refusal too, like every other answer of the instance.
    'Access-Control-Allow-Origin: *',
    'Access-Control-Expose-Headers: x-service-version',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/**
 * Fastify's `clientErrorHandler`: answers what Node refuses before routing (oversized headers,
 * malformed requests, timeouts) with the envelope instead of Node's bare text, then closes.
 */
export function createClientErrorHandler(version: string, limits: HttpLimits) {
  // Bytes arriving after a refusal make the parser report again: the first answer stands.
  const refused = new WeakSet<Socket>();
  return (error: ClientError, socket: Socket): void => {
    if (refused.has(socket)) return;
    const refusal = clientErrorRefusal(error, limits);
    // A response already under way cannot be followed by another on the same connection.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (!refusal || socket.destroyed || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    refused.add(socket);
    // The server keeps connections half-open: close ours once the refusal is written.
    socket.end(clientErrorResponse(refusal, version), () => socket.destroy());
  };
}
