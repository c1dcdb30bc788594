import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import type { QueryAnswer } from '@replix/engine';
import { errorResponse, InstanceError } from '../errors.ts';

/** The event stream's texts (docs/instance-api.md#live-queries). */

export const HEARTBEAT = Buffer.from(': heartbeat\n\n');

const EVENT_END = Buffer.from('\n\n');
const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;
/** Where the part of an answer that differs on every run begins (the end of its meta). */
const TIMING_FIELD = ',"timing_ms":';

/**
 * A result event: the answer's envelope as its data (one line of JSON), the generation and boot
 * as id. Made from the answer's bytes, never as one string: a result of megabytes costs one
 * copy, not a decode, a split and an encode, in the one turn of the event loop it takes.
 */
export function resultEvent(
  generation: number,
  bootId: string,
  answer: Pick<QueryAnswer, 'chunks' | 'text'>,
): Buffer {
  const head = Buffer.from(`id: ${generation}.${bootId}\ndata: `);
  // A line break would end the data field early. The envelope's JSON has none (the writer
  // escapes them in strings), but be sure: a search of the bytes, done natively.
  const lineBreak = answer.chunks.some(
    (chunk) => chunk.includes(LINE_FEED) || chunk.includes(CARRIAGE_RETURN),
  );
  if (!lineBreak) return Buffer.concat([head, ...answer.chunks, EVENT_END]);
  const data = answer
    .text()
    .split(/\r\n|\r|\n/)
    .join('\ndata: ');
  return Buffer.concat([head, Buffer.from(data), EVENT_END]);
}

/**
 * The bytes at an answer's end searched for its timing field: what follows the field (the
 * snapshot fields and the version) is far shorter.
 */
const TAIL_BYTES = 4096;

/**
 * The hash a result is compared by, to send only a changed one: the answer's bytes without its
 * timing and snapshot fields, which end its meta.
 */
export function resultHash(chunks: readonly Buffer[]): string {
  const hash = createHash('sha256');
  let first = chunks.length;
  let tailBytes = 0;
  while (first > 0 && tailBytes < TAIL_BYTES) tailBytes += (chunks[--first] as Buffer).length;
  for (let i = 0; i < first; i++) hash.update(chunks[i] as Buffer);
  const tail = Buffer.concat(chunks.slice(first));
  const cut = tail.lastIndexOf(TIMING_FIELD);
  return hash.update(cut < 0 ? tail : tail.subarray(0, cut)).digest('base64url');
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
