import { ReplixClient, ReplixConnectionError, ReplixError } from '@replix/sdk';

/**
 * Running a query against a database's instance straight from the browser (not through the
 * control plane), with the SDK's client: `POST <instance>/query` with the query as plain text,
 * or the cacheable `GET <instance>/query?q=`, as docs/instance-api.md describes. The playground
 * shows the instance's answer as it came, so the client keeps no ETag cache and retries nothing.
 */

export type QueryMethod = 'POST' | 'GET';

export interface QueryRequest {
  readonly instanceUrl: string;
  readonly apiKey: string;
  readonly text: string;
  readonly method: QueryMethod;
}

/** The envelope's `meta`, as far as the playground shows it (docs/instance-api.md). */
export interface QueryMeta {
  table?: string;
  query?: Record<string, unknown>;
  pagination?: {
    count?: number;
    total_matched?: number;
    has_more?: boolean;
    limit?: number;
    next_cursor?: string;
  };
  timing_ms?: number;
  snapshot?: { swap_count?: number; age_ms?: number };
  version?: string;
}

export type QueryRow = Record<string, unknown>;

interface Answer {
  /** The HTTP status, and the response headers the browser lets the page read. */
  readonly status: number;
  readonly etag: string | null;
  readonly serviceVersion: string | null;
  /** Time from sending to the whole body, measured here (network included). */
  readonly roundTripMs: number;
  /** The body exactly as received. */
  readonly rawText: string;
}

export type QueryOutcome =
  | (Answer & { readonly kind: 'rows'; readonly rows: QueryRow[]; readonly meta: QueryMeta })
  | (Answer & { readonly kind: 'error'; readonly code: string; readonly message: string })
  /** 503 while loading or after a failed start: the body is the status document. */
  | (Answer & { readonly kind: 'unavailable'; readonly document: unknown })
  /** 304 to a GET whose ETag matched (the browser's own cache may answer this too). */
  | (Answer & { readonly kind: 'not-modified' })
  /** Anything else: not the instance's JSON. */
  | (Answer & { readonly kind: 'unexpected' });

/** The fetch failed before any answer: unreachable, or refused by the browser (CORS). */
export class InstanceUnreachableError extends Error {
  readonly url: string;

  constructor(url: string) {
    super(
      `No answer from ${url}. The instance may be stopped or unreachable from this browser, ` +
        'or it may not allow requests from this page (cross-origin).',
    );
    this.name = 'InstanceUnreachableError';
    this.url = url;
  }
}

export async function runInstanceQuery(
  request: QueryRequest,
  signal?: AbortSignal,
): Promise<QueryOutcome> {
  const started = performance.now();
  // The answer as it came (status, headers, body), whatever the client makes of it.
  let response: Response | undefined;
  const client = new ReplixClient({
    url: request.instanceUrl,
    key: request.apiKey,
    cache: false,
    retry: { retries: 0 },
    parseJson: parseExact,
    fetch: async (input, init) => {
      // Show what the instance answers, not a copy the browser kept.
      const answered = await fetch(input, { ...init, cache: 'no-store' });
      response = answered.clone();
      return answered;
    },
  });
  try {
    await client.query(request.text, { method: request.method, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    if (error instanceof ReplixConnectionError && error.code === 'connection_failed')
      throw new InstanceUnreachableError(request.instanceUrl);
    if (!(error instanceof ReplixError) || !response) throw error;
  }
  if (!response) throw new InstanceUnreachableError(request.instanceUrl);
  const rawText = await response.text();
  const answer: Answer = {
    status: response.status,
    etag: response.headers.get('etag'),
    serviceVersion: response.headers.get('x-service-version'),
    roundTripMs: performance.now() - started,
    rawText,
  };
  if (response.status === 304) return { ...answer, kind: 'not-modified' };
  const body = parseExact(rawText);
  if (response.status === 503) return { ...answer, kind: 'unavailable', document: body };
  if (isErrorEnvelope(body)) {
    return { ...answer, kind: 'error', code: body.error.code, message: body.error.message };
  }
  if (response.ok && isSuccessEnvelope(body)) {
    return { ...answer, kind: 'rows', rows: body.data, meta: body.meta };
  }
  return { ...answer, kind: 'unexpected' };
}

function isErrorEnvelope(body: unknown): body is { error: { code: string; message: string } } {
  if (typeof body !== 'object' || body === null || !('error' in body)) return false;
  const error = body.error as { code?: unknown; message?: unknown } | null;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

function isSuccessEnvelope(body: unknown): body is { data: QueryRow[]; meta: QueryMeta } {
  return (
    typeof body === 'object' &&
    body !== null &&
    'data' in body &&
    Array.isArray(body.data) &&
    'meta' in body &&
    typeof body.meta === 'object'
  );
}

// JSON.parse source text access (ES2025): not yet in TypeScript's es2024 library.
interface ExactJson {
  rawJSON?: (text: string) => unknown;
  isRawJSON?: (value: unknown) => boolean;
}
const exactJson = JSON as unknown as ExactJson;

/**
 * JSON.parse that keeps every digit of BIGINT and DECIMAL values (`12.50`,
 * `18446744073709551615`): where the browser supports it, a number whose text would change by
 * becoming a double stays as its source text. Not JSON: undefined.
 */
export function parseExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) => {
    if (
      typeof value === 'number' &&
      context?.source !== undefined &&
      exactJson.rawJSON &&
      String(value) !== context.source
    ) {
      return exactJson.rawJSON(context.source);
    }
    return value;
  };
  try {
    return JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch {
    return undefined;
  }
}

/** A number kept as its source text by parseExact. */
export function isExactNumber(value: unknown): boolean {
  return exactJson.isRawJSON?.(value) ?? false;
}

/** A value as one line of text: strings as they are, the rest as compact JSON. */
export function cellText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  return JSON.stringify(value);
}

/**
 * runInstanceQuery, but a key made moments ago that the instance does not know yet (401) is
 * tried again each second while it is fresh.
 */
export async function runWithFreshKey(
  request: QueryRequest,
  isFresh: (key: string) => boolean,
): Promise<QueryOutcome> {
  for (;;) {
    const outcome = await runInstanceQuery(request);
    if (outcome.status !== 401 || !isFresh(request.apiKey)) return outcome;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Single-quoted for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The same request as a curl command line (the key included: it is the caller's own). */
export function curlCommand(request: QueryRequest): string {
  const base = `${request.instanceUrl.replace(/\/+$/, '')}/query`;
  const auth = `-H ${shellQuote(`Authorization: Bearer ${request.apiKey}`)}`;
  if (request.method === 'GET') {
    return `curl -sS -G ${shellQuote(base)} ${auth} --data-urlencode ${shellQuote(`q=${request.text}`)}`;
  }
  return `curl -sS ${shellQuote(base)} ${auth} -H 'Content-Type: text/plain' --data-binary ${shellQuote(request.text)}`;
}

/** Where a parse error points: `Syntax error at line 2, column 7: …`. */
export function errorPosition(message: string): { line: number; column: number } | null {
  const match = /\bline (\d+), column (\d+)\b/.exec(message);
  return match ? { line: Number(match[1]), column: Number(match[2]) } : null;
}

/** The UTF-16 offset of a 1-based line and code-point column in `text` (clamped). */
export function offsetOf(text: string, position: { line: number; column: number }): number {
  const lines = text.split('\n');
  const lineIndex = Math.min(Math.max(position.line, 1), lines.length) - 1;
  let offset = 0;
  for (let index = 0; index < lineIndex; index += 1) offset += (lines[index]?.length ?? 0) + 1;
  const chars = Array.from(lines[lineIndex] ?? '');
  const before = chars.slice(0, Math.max(position.column - 1, 0)).join('');
  return offset + before.length;
}
