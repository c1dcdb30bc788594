/** A problem with a schema config's `where` predicate, at a 1-based character position in it. */
export interface WhereProblem {
  readonly message: string;
  readonly position: number;
}

/**
 * How one SQL dialect spells the things a predicate could use to leave its parentheses. The
 * checks read these flags; nothing else in `where/` knows which backend it is looking at.
 */
export interface WhereDialect {
  /** node-sql-parser's names for the dialect, tried in order; the first that parses wins. */
  readonly parserDatabases: readonly string[];
  /**
   * Whether a backslash may escape a quote in some server setting (MySQL without
   * NO_BACKSLASH_ESCAPES, PostgreSQL `E'…'` strings). Where it may, a backslash before a quote is
   * refused: the server could end the string somewhere else than the check does.
   */
  readonly backslashMayEscape: boolean;
  /** `#` starts a comment (MySQL/MariaDB). */
  readonly hashComments: boolean;
  /** `$` starts a dollar-quoted string or a parameter (PostgreSQL). */
  readonly dollarQuotes: boolean;
  /** Quote characters and their closing partner, for strings and quoted identifiers. */
  readonly quotes: Readonly<Record<string, string>>;
}
