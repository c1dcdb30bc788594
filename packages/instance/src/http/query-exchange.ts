import { Buffer } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { unexpectedErrorForLog, wellFormedRequestId } from '@replix/runtime/logger';
import { errorType, requestSpan, type Span } from '@replix/runtime/tracing';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { errorResponse } from '../errors.ts';
import { type QueryRequestFields, queryRequestFields } from './request-fields.ts';
import { endWithHead, type FixedFields, fixedFields, NO_FIXED_FIELDS } from './response-head.ts';

/** Where a query exchange's failures are logged (a pino logger, or a request's). */
export type ExchangeLog = Pick<FastifyBaseLogger, 'error'>;

/**
 * One query request and its response, written beneath the framework: the query route reads
 * the request's headers and writes its answer (or its error, in the one envelope every route
 * uses, `errorResponse`) in one write where it can (`endWithHead`), else with one `writeHead`
 * and one `end`. It is made by the query listener for `GET /query` straight off `node:http`
 * (`query-listener.ts`), or from a Fastify request the route took over (`POST /query`; any query
 * request while tracing is on): the route is the same.
 *
 * It is also the query's cancel signal: `aborted` turns true when the client leaves before the
 * answer is out. It listens for that only once a query needs it (a query that waits for a turn,
 * runs past its first slice, or has an answer the socket did not take at once).
 */
export class QueryExchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  /** The request's fields a query reads, from its raw header lines. */
  readonly requestFields: QueryRequestFields;
  /** The request's trace span, when tracing is on. */
  readonly span: Span | undefined;
  readonly #log: ExchangeLog;
  /** The fields every answer of its kind carries, joined once (`fixedFields`). */
  #fixed: FixedFields;
  /**
   * The answer's own fields as name, value, name, value… (what `writeHead` takes with the
   * least work: no object to walk); names in lowercase, set once each (`header`).
   */
  readonly #fields: (string | number)[] = [];
  aborted = false;
  closed = false;
  #onEnd: (() => void) | undefined;
  #onAbort: (() => void) | undefined;
  #watching = false;

  /**
   * `fixed`: the fields every answer carries (the exchange adds its own). `requestFields`: the
   * request's, when already read.
   */
  constructor(
    request: IncomingMessage,
    response: ServerResponse,
    fixed: FixedFields,
    log: ExchangeLog,
    span?: Span,
    requestFields: QueryRequestFields = queryRequestFields(request.rawHeaders),
  ) {
    this.request = request;
    this.response = response;
    this.requestFields = requestFields;
    this.#fixed = fixed;
    this.#log = log;
    this.span = span;
  }

  /**
   * Takes a Fastify request over: Fastify sends nothing more for it, and the fields its hooks
   * set (the version, CORS, rate limits) go out with the exchange's answer.
   */
  static takenFrom(request: FastifyRequest, reply: FastifyReply): QueryExchange {
    reply.hijack();
    const fields = fixedFields(fieldList(reply.getHeaders() as OutgoingHttpHeaders));
    return new QueryExchange(request.raw, reply.raw, fields, request.log, requestSpan(request));
  }

  /**
   * Sets a field of the answer, its name in lowercase as every caller writes it (again: its new
   * value replaces the old).
   */
  header(name: string, value: string | number): this {
    // A fixed field set again (none is, today): the fixed ones become the answer's own.
    if (this.#fixed.names.has(name)) {
      this.#fields.unshift(...this.#fixed.list);
      this.#fixed = NO_FIXED_FIELDS;
    }
    const fields = this.#fields;
    for (let i = 0; i < fields.length; i += 2) {
      if (fields[i] === name) {
        fields[i + 1] = value;
        return this;
      }
    }
    fields.push(name, value);
    return this;
  }

  /** Ends the exchange with `status` and `body` (none: an empty answer, as a 304's). */
  send(status: number, body?: Buffer | string, contentType = 'application/json; charset=utf-8') {
    if (body !== undefined) {
      this.header('content-type', contentType).header('content-length', Buffer.byteLength(body));
      // Head and body in one write where the answer is plain; else Node's own way.
      if (endWithHead(this.response, status, this.#fixed, this.#fields, body)) return;
    }
    this.response.writeHead(status, this.#allFields());
    this.response.end(body);
  }

  /** Answers `status` with a stream's bytes (an answer of many chunks, an event stream). */
  sendStream(status: number, stream: Readable, contentType: string): void {
    this.header('content-type', contentType);
    this.response.writeHead(status, this.#allFields());
    // Either side failing or closing ends the other: a client gone stops the stream.
    pipeline(stream, this.response, () => {});
  }

  /** The fixed fields, then the answer's own. */
  #allFields(): (string | number)[] {
    const fixed = this.#fixed.list;
    return fixed.length === 0 ? this.#fields : [...fixed, ...this.#fields];
  }

  /** Answers an error in the envelope every route uses; a 5xx is logged, its cause never sent. */
  fail(error: unknown): void {
    // Too late for an answer of its own: the connection is cut, so the client sees it failed.
    if (this.response.headersSent) {
      this.destroy();
      return;
    }
    const { status, body } = errorResponse(error);
    if (status >= 500) {
      const id = this.request.headers['x-request-id'];
      const named = wellFormedRequestId(id) ? { reqId: id } : {};
      const err = body.error.code === 'internal_error' ? unexpectedErrorForLog(error) : error;
      this.#log.error({ err, ...named }, 'request failed');
    }
    this.span?.setAttribute('error.type', errorType(error));
    this.send(status, JSON.stringify(body));
  }

  /** Ends the exchange without an answer (nobody is left to read one). */
  destroy(): void {
    this.response.destroy();
  }

  /** From now on, a client gone before the answer is out cancels the query. */
  watch(onAbort?: () => void): void {
    this.#onAbort = onAbort;
    this.#listen();
  }

  /** Runs `release` once the response is out or the connection gone. */
  onEnd(release: () => void): void {
    this.#onEnd = release;
    this.#listen();
  }

  #listen(): void {
    if (this.#watching) return;
    this.#watching = true;
    const response = this.response;
    response.once('close', () => {
      this.closed = true;
      if (!response.writableFinished) {
        this.aborted = true;
        this.#onAbort?.();
      }
      this.#onEnd?.();
    });
  }
}

/** Header fields as `writeHead` takes them fastest: name, value, name, value… */
export function fieldList(headers: OutgoingHttpHeaders): (string | number)[] {
  const fields: (string | number)[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) fields.push(name, each);
    else fields.push(name, value);
  }
  return fields;
}
