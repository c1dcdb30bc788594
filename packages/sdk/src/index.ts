export type { NumberMode, QueryOptions, QueryText, ReplixClientOptions } from './client.ts';
export { MAX_GET_URL_LENGTH, ReplixClient } from './client.ts';
export type { ReplixErrorCode } from './errors.ts';
export {
  ERROR_CLASSES,
  ReplixAuthError,
  ReplixConnectionError,
  ReplixError,
  ReplixLimitError,
  ReplixParseError,
  ReplixQueryError,
  ReplixUnavailableError,
  ReplixUnknownTableError,
} from './errors.ts';
export type { EtagCacheOptions } from './etag-cache.ts';
export type { RqlScalar, RqlValue } from './literal.ts';
export { ExactNumber, escapeLike, RqlValueError } from './literal.ts';
export type { LiveQuery, LiveQueryOptions, LiveQueryStatus } from './live-query.ts';
export type { QueryMeta, QueryResult } from './query-result.ts';
export type { ReconnectPolicy } from './reconnect-backoff.ts';
export type { RetryPolicy } from './retry.ts';
export { RqlQuery, rql } from './rql.ts';
