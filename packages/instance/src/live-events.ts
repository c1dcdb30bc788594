import { errorResponse, InstanceError } from './errors.ts';

/** The event stream's texts (docs/instance-api.md#live-queries). */

export const HEARTBEAT = Buffer.from(': heartbeat\n\n');

/** A result event: the envelope as its data (one line of JSON), the generation and boot as id. */
export function resultEvent(generation: number, bootId: string, body: string): Buffer {
  // A line break would end the data field early; the envelope's JSON has none, but be sure.
  const data = body.split(/\r\n|\r|\n/).join('\ndata: ');
  return Buffer.from(`id: ${generation}.${bootId}\ndata: ${data}\n\n`);
}

/** The event that ends a stream for good (`query-error`): the client does not come back. */
export function errorEvent(error: unknown): Buffer {
  return Buffer.from(`event: query-error\ndata: ${JSON.stringify(errorResponse(error).body)}\n\n`);
}

/**
 * The event that ends a stream for a passing reason (`query-retry`): the client reconnects
 * after `retryMs` at the least, with `Last-Event-ID`.
 */
export function retryEvent(error: InstanceError, retryMs: number): Buffer {
  const data = JSON.stringify(errorResponse(error).body);
  return Buffer.from(`retry: ${retryMs}\nevent: query-retry\ndata: ${data}\n\n`);
}

export const REVOKED = errorEvent(
  new InstanceError('unauthorized', 'The API key of this live query is no longer valid.'),
);

/** Error codes a client should retry after a while: the request was fine, the instance busy. */
export function isTransient(error: unknown): error is InstanceError {
  return (
    error instanceof InstanceError &&
    (error.code === 'too_many_requests' || error.code === 'service_unavailable')
  );
}
