export type * from './ast.ts';
export type { SourcePosition } from './errors.ts';
export { formatExcerpt, positionAt, QueryParseError } from './errors.ts';
export type { ParseOptions } from './parser.ts';
export { parseQuery } from './parser.ts';
export { suggest } from './suggest.ts';
