import { DEFAULT_PARSE_LIMITS } from '@replix/query';

/**
 * Structural caps on one query, each refused with `query_too_complex` before a row is read.
 * An API key may be public, so any query text may be hostile: these keep parsing, validation
 * and the per-row work a filter or sort adds bounded, whatever the text. Every cap is far above
 * what a real application writes. The first three are enforced by the parser, before it
 * recurses or reads on; the rest by validation.
 */
export const QUERY_LIMITS = Object.freeze({
  /** Tokens in the query text. */
  tokens: DEFAULT_PARSE_LIMITS.maxTokens,
  /** Selections nested in one another, the top-level selection included. */
  selectionDepth: DEFAULT_PARSE_LIMITS.maxSelectionDepth,
  /** Parentheses open at once in one filter, the filter's own included. */
  filterDepth: DEFAULT_PARSE_LIMITS.maxFilterDepth,
  /** ORDER BY keys of one query or nested selection, a repeated key counted once. */
  orderByKeys: 32,
  /** Conditions (comparison, LIKE, ILIKE, IN, IS NULL, BETWEEN) in all filters together. */
  filterTerms: DEFAULT_PARSE_LIMITS.maxConditions,
  /** Keys one ORDER BY may write before repeats are collapsed (the parser refuses more). */
  writtenOrderByKeys: DEFAULT_PARSE_LIMITS.maxSortKeys,
  /** Values in one IN list. */
  inListValues: 1000,
  /** Relations one path of a filter or ORDER BY walks: `a.b.c.field` walks 3. */
  pathRelations: 8,
  /** Selection items at all levels together: fields, wildcards, relations and aggregates. */
  selectionItems: 2000,
});

export type StructuralLimits = typeof QUERY_LIMITS;
