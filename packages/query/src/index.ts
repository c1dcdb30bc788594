export type * from './ast.ts';
export type { TextPosition } from './errors.ts';
export { formatExcerpt, positionAt, QueryParseError, QueryTooComplexError } from './errors.ts';
export type { ParseLimitName, ParseLimits } from './parse-limits.ts';
export { DEFAULT_PARSE_LIMITS } from './parse-limits.ts';
export type { ParseOptions } from './parser.ts';
export { parseQuery } from './parser.ts';
export { suggest } from './suggest.ts';
