import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { parse } from 'node:querystring';
import type { ApiKeyVerifier } from './api-keys.ts';
import { keyCheckFor } from './key-refusal.ts';
import { type ExchangeLog, fieldList, QueryExchange } from './query-exchange.ts';
import { missingQuery, type QueryRoutes } from './query-route.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { queryRequestFields } from './request-fields.ts';
import { fixedFields } from './response-head.ts';

/** A `node:http` request listener. */
type Listener = (request: IncomingMessage, response: ServerResponse) => void;

export interface QueryListenerOptions {
  readonly keys: ApiKeyVerifier;
  readonly rateLimiter?: RateLimiter | undefined;
  readonly routes: QueryRoutes;
  /** The fields every answer carries (the version, `Vary: Origin`). */
  readonly headers: OutgoingHttpHeaders;
  /** The fields added to the answer of a request with an `Origin` (CORS). */
  readonly crossOriginHeaders: OutgoingHttpHeaders;
  readonly log: ExchangeLog;
  /** True once the server is closing: Fastify then answers 503 to every new request. */
  readonly closing: () => boolean;
}

const PATH = '/query';
const QUESTION_MARK = 63;

/**
 * `GET` and `HEAD /query` straight off `node:http`, before Fastify: the request path of the
 * instance's hottest call, with nothing a bare server does not pay for but the query's own work
 * (issue 27: Fastify's routing, hooks and reply cost a PK lookup about a third of its CPU). It
 * does what the Fastify route's hooks do (the key's scope, its rate limit, the version and CORS
 * fields) and hands the request to the same query route (`QueryRoutes.serveQuery`), which
 * writes every answer and error the same way for both. Any other request goes to Fastify.
 */
export function queryListener(fastify: Listener, options: QueryListenerOptions): Listener {
  const { keys, routes, log } = options;
  const fields = fixedFields(fieldList(options.headers));
  const crossOriginFields = fixedFields(
    fieldList({ ...options.headers, ...options.crossOriginHeaders }),
  );
  const refusalOf = keyCheckFor('query', options.rateLimiter);
  return (request, response) => {
    const url = request.url ?? '';
    const method = request.method;
    if (
      (method !== 'GET' && method !== 'HEAD') ||
      !url.startsWith(PATH) ||
      (url.length > PATH.length && url.charCodeAt(PATH.length) !== QUESTION_MARK) ||
      options.closing()
    ) {
      fastify(request, response);
      return;
    }
    const asked = queryRequestFields(request.rawHeaders);
    const answerFields = asked.origin === undefined ? fields : crossOriginFields;
    const exchange = new QueryExchange(request, response, answerFields, log, undefined, asked);
    const key = keys.identify(asked.authorization);
    const refusal = refusalOf(key, exchange);
    // Refused after the bytes at hand are parsed, as the Fastify routes refuse.
    if (refusal) queueMicrotask(() => exchange.fail(refusal));
    else {
      const text = queryParameter(url, PATH.length + 1);
      if (typeof text === 'string') routes.serveQuery(text, exchange, true, key?.keyId ?? '');
      else exchange.fail(missingQuery());
    }
  };
}

const AMPERSAND = '&';

/**
 * Request targets (`/query?q=…`) whose `q` was read lately, and its text: a hot query is decoded
 * once, and its text, then the same string each time, keeps the hash the plan and ETag caches
 * look it up by. Keyed by the whole target, the string Node made for the request (hashing a
 * slice of it would read it character by character). Bounded by the characters of both (two
 * bytes each at most), emptied when full: a flood of distinct queries costs what it cost
 * without it.
 */
export const DECODED_TEXTS_MAX_CHARS = 256 * 1024;
const decodedTexts = new Map<string, string>();
let decodedChars = 0;

function remember(target: string, text: string): void {
  const chars = target.length + text.length;
  if (chars > DECODED_TEXTS_MAX_CHARS) return;
  if (decodedChars + chars > DECODED_TEXTS_MAX_CHARS) {
    decodedTexts.clear();
    decodedChars = 0;
  }
  decodedTexts.set(target, text);
  decodedChars += chars;
}

/** The characters the decoded texts hold now (tests). */
export function decodedTextChars(): number {
  return decodedChars;
}

/**
 * The `q` parameter of the query string that starts at `searchStart` in `target`, as
 * `querystring.parse` reads it (a string, or an array when given more than once, or
 * undefined), without parsing the usual `q=<query>` alone into an object: a query of plain
 * characters is taken as it is, an encoded one decoded once.
 */
export function queryParameter(target: string, searchStart: number): unknown {
  const known = decodedTexts.get(target);
  if (known !== undefined) return known;
  const search = target.slice(searchStart);
  if (!search.startsWith('q=') || search.includes(AMPERSAND)) return parse(search).q;
  const value = search.slice(2);
  try {
    const text =
      value.includes('%') || value.includes('+')
        ? decodeURIComponent(value.replaceAll('+', ' '))
        : value;
    remember(target, text);
    return text;
  } catch {
    // Malformed escapes: querystring keeps them as they are.
    return parse(search).q;
  }
}
