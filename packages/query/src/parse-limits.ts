/**
 * How big and how deep a query may be before the parser refuses it, so that hostile text can
 * neither keep a server busy nor overflow the stack: the parser recurses once per level of
 * parentheses or braces, and counts each level before going deeper.
 */
export interface ParseLimits {
  /** The most tokens a query may have. */
  readonly maxTokens: number;
  /** The most selections `{ … }` nested in one another, the top-level selection included. */
  readonly maxSelectionDepth: number;
  /** The most parentheses nested in one another in one filter, the filter's own included. */
  readonly maxFilterDepth: number;
  /** The most conditions (comparison, LIKE, IN, IS NULL, BETWEEN) in all filters together. */
  readonly maxConditions: number;
  /** The most keys one ORDER BY may write, repeats included (they collapse only later). */
  readonly maxSortKeys: number;
}

/** Far beyond any hand-written or generated query; far too small to hurt a server. */
export const DEFAULT_PARSE_LIMITS: ParseLimits = Object.freeze({
  maxTokens: 10_000,
  maxSelectionDepth: 32,
  maxFilterDepth: 64,
  maxConditions: 256,
  maxSortKeys: 256,
});

/** Which parse limit a query went over (`QueryTooComplexError.limit`). */
export type ParseLimitName = keyof ParseLimits;
