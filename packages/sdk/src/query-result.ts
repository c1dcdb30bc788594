/** The success envelope (docs/instance-api.md, "Success envelope"). */

export interface QueryMeta {
  readonly table: string;
  /** Echo of what the query specified: fields, aggregates, filter, order_by, limit, offset. */
  readonly query: Readonly<Record<string, unknown>>;
  readonly pagination: {
    readonly count: number;
    readonly total_matched: number;
    readonly has_more: boolean;
    readonly limit: number;
    /** Under AFTER paging, the next page's cursor; absent at the end. */
    readonly next_cursor?: string;
  };
  readonly timing_ms: number;
  readonly snapshot: { readonly swap_count: number; readonly age_ms: number };
  readonly version: string;
}

export interface QueryResult<Row> {
  readonly data: Row[];
  readonly meta: QueryMeta;
  /** The answer's ETag (GET only). */
  readonly etag: string | undefined;
  /** True when the instance answered 304 and the body is the cached one. */
  readonly cached: boolean;
  /** The JSON text as received, every digit of BIGINT and DECIMAL values kept. */
  readonly body: string;
}

export function isEnvelope(value: unknown): value is { data: unknown[]; meta: QueryMeta } {
  if (value === null || typeof value !== 'object') return false;
  const { data, meta } = value as { data?: unknown; meta?: unknown };
  return Array.isArray(data) && meta !== null && typeof meta === 'object';
}

export function errorEnvelope(value: unknown): { code: string; message: string } | undefined {
  if (value === null || typeof value !== 'object' || !('error' in value)) return undefined;
  const { error } = value;
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' && typeof message === 'string' ? { code, message } : undefined;
}
