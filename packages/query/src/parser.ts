import { aggregateKey } from './aggregate-key.ts';
import type {
  AggregateCall,
  AggregateFunction,
  CompareOperator,
  Condition,
  JsonStep,
  Literal,
  Path,
  Query,
  SelectionItem,
  SortItem,
  Span,
} from './ast.ts';
import { QueryParseError, QueryTooComplexError } from './errors.ts';
import { Lexer } from './lexer.ts';
import { DEFAULT_PARSE_LIMITS, type ParseLimitName, type ParseLimits } from './parse-limits.ts';
import { suggest } from './suggest.ts';
import { describeToken, shorten, type Token } from './token.ts';

/** Any limit left out takes its value from `DEFAULT_PARSE_LIMITS`. */
export type ParseOptions = Partial<ParseLimits>;

/**
 * Parses query text into its syntax tree, or throws a `QueryParseError` at the first syntax
 * error, or a `QueryTooComplexError` at the first token over a limit of `ParseLimits`. The
 * grammar is in the header of `ast.ts`.
 */
export function parseQuery(source: string, options: ParseOptions = {}): Query {
  const limits = { ...DEFAULT_PARSE_LIMITS, ...options };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${value}.`);
    }
  }
  return new Parser(source, limits).parseQuery();
}

const KNOWN_PRAGMAS = ['lenient'];

/** The clauses after a selection, in the only order they may come in. */
const CLAUSES = ['HAVING', 'ORDER BY', 'LIMIT', 'OFFSET', 'AFTER'] as const;
type Clause = (typeof CLAUSES)[number];

interface Clauses {
  readonly having: Condition | null;
  readonly orderBy: readonly SortItem[];
  readonly limit: number | null;
  readonly offset: number | null;
  readonly after: string | null;
}

const COMPARE_OPERATORS: Readonly<Record<string, CompareOperator>> = {
  '=': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

const AGGREGATES: ReadonlySet<string> = new Set<AggregateFunction>([
  'COUNT',
  'SUM',
  'AVG',
  'MIN',
  'MAX',
]);

/** Operators and keywords that may follow a field in a condition. */
const CONDITION_KEYWORDS: ReadonlySet<string> = new Set(['LIKE', 'ILIKE', 'IN', 'IS', 'BETWEEN']);

/** Steps a JSON path may take: a deeper value is read in the client. */
const MAX_JSON_STEPS = 32;

const VALUE_EXPECTED = "a value (a 'string', a number, true, false or NULL)";

/**
 * A recursive-descent parser with one method per grammar production. Keywords are names that
 * a production checks for where it expects one, so they stay usable as field names elsewhere.
 */
class Parser {
  readonly #source: string;
  readonly #lexer: Lexer;
  /** Tokens peeked at but not consumed yet: the grammar needs up to two of lookahead. */
  readonly #lookahead: Token[] = [];
  /** Where the last consumed token ends, which is where the node being built ends. */
  #lastEnd = 0;
  readonly #limits: ParseLimits;
  /**
   * Open selections and open parentheses of the filter being read. The parser (and the engine
   * after it) recurse once per level; the token limit alone would still let a query nest
   * thousands deep and overflow the stack.
   */
  #selectionDepth = 0;
  #filterDepth = 0;
  /** Conditions parsed so far, in every filter of the query. */
  #conditions = 0;
  /** Whether the condition being read is a HAVING clause's, where aggregates may be named. */
  #inHaving = false;

  constructor(source: string, limits: ParseLimits) {
    this.#source = source;
    this.#limits = limits;
    this.#lexer = new Lexer(source, limits.maxTokens);
  }

  // Productions

  /**
   * ```
   * Query := Pragma* Name Filter? Selection Clauses EOF
   * ```
   */
  parseQuery(): Query {
    let lenient = false;
    while (this.peekToken('@')) {
      this.parsePragma();
      lenient = true;
    }
    const tableToken = this.peek();
    if (tableToken.kind !== 'name') this.unexpected(tableToken, 'a table name');
    this.advance();
    const filter = this.peekToken('(') ? this.parseFilter() : null;
    if (!this.peekToken('{')) {
      const token = this.peek();
      if (token.kind === 'punctuation' && token.value === '@') {
        this.fail(token.span.start, 'Pragmas such as @lenient go before the table name.');
      }
      this.unexpected(token, filter ? '"{"' : '"(" or "{" after the table name');
    }
    const selection = this.parseSelection();
    const clauses = this.parseClauses(true);
    const end = this.peek();
    if (end.kind !== 'eof') this.unexpected(end, this.whatMayFollow(clauses));
    return {
      kind: 'query',
      lenient,
      table: { name: tableToken.value, span: tableToken.span },
      filter,
      selection,
      having: clauses.having,
      orderBy: clauses.orderBy,
      limit: clauses.limit,
      offset: clauses.offset,
      after: clauses.after,
      source: this.#source,
    };
  }

  /**
   * ```
   * Pragma := '@' Name          (only `@lenient` is known)
   * ```
   */
  parsePragma(): void {
    const at = this.expectToken('@');
    const token = this.peek();
    if (token.kind !== 'name') this.unexpected(token, 'a pragma name after "@"');
    this.advance();
    if (KNOWN_PRAGMAS.includes(token.value.toLowerCase())) return;
    const suggestion = suggest(token.value, KNOWN_PRAGMAS);
    const hint = suggestion === undefined ? '' : ` Did you mean @${suggestion}?`;
    this.fail(at.span.start, `Unknown pragma @${shorten(token.value)}.${hint}`);
  }

  /**
   * ```
   * Filter := '(' Or ')'
   * ```
   */
  parseFilter(): Condition {
    const open = this.expectToken('(');
    this.openParenthesis(open);
    if (this.peekToken(')')) {
      this.fail(
        this.peek().span.start,
        'Empty filter: write a condition between "(" and ")", or leave the parentheses out.',
      );
    }
    const condition = this.parseOr();
    this.expectToken(')', 'AND, OR or ")"');
    this.#filterDepth--;
    return condition;
  }

  /**
   * ```
   * Or := And ('OR' And)*
   * ```
   */
  parseOr(): Condition {
    const start = this.peek().span.start;
    const operands = [this.parseAnd()];
    while (this.peekKeyword('OR')) {
      this.advance();
      operands.push(this.parseAnd());
    }
    return this.combine('or', operands, start);
  }

  /**
   * ```
   * And := Primary ('AND' Primary)*
   * ```
   */
  parseAnd(): Condition {
    const start = this.peek().span.start;
    const operands = [this.parsePrimary()];
    while (this.peekKeyword('AND')) {
      this.advance();
      operands.push(this.parsePrimary());
    }
    return this.combine('and', operands, start);
  }

  /**
   * ```
   * Primary := '(' Or ')' | Predicate
   * ```
   * A parenthesized condition keeps the span of its contents: the parentheses only group.
   */
  parsePrimary(): Condition {
    const token = this.peek();
    if (token.kind === 'punctuation' && token.value === '(') {
      this.openParenthesis(this.advance());
      const condition = this.parseOr();
      this.expectToken(')', 'AND, OR or ")"');
      this.#filterDepth--;
      return condition;
    }
    if (token.kind !== 'name') this.unexpected(token, 'a condition');
    return this.parsePredicate();
  }

  /**
   * ```
   * Predicate := Path ( CompareOp Literal
   *                   | ('LIKE' | 'ILIKE') String
   *                   | 'IN' '(' Literal (',' Literal)* ')'
   *                   | 'IS' 'NOT'? 'NULL'
   *                   | 'BETWEEN' Literal 'AND' Literal )
   * ```
   */
  parsePredicate(): Condition {
    this.countCondition(this.peek());
    const field = this.parsePath(this.#inHaving);
    const token = this.peek();
    const start = field.span.start;
    if (token.kind === 'operator') {
      this.advance();
      const value = this.parseLiteral();
      const operator = COMPARE_OPERATORS[token.value]!;
      return { kind: 'compare', operator, field, value, span: this.spanFrom(start) };
    }
    const keyword = token.kind === 'name' && !token.quoted ? token.value.toUpperCase() : '';
    switch (keyword) {
      case 'LIKE':
      case 'ILIKE': {
        this.advance();
        const pattern = this.peek();
        if (pattern.kind !== 'string') {
          this.unexpected(pattern, `a string pattern after ${keyword}`);
        }
        this.advance();
        const caseInsensitive = keyword === 'ILIKE';
        const span = this.spanFrom(start);
        return { kind: 'like', caseInsensitive, field, pattern: pattern.value, span };
      }
      case 'IN': {
        this.advance();
        const values = this.parseList('IN');
        return { kind: 'in', field, values, span: this.spanFrom(start) };
      }
      case 'CONTAINS':
      case 'CONTAINED':
      case 'OVERLAPS': {
        this.advance();
        if (keyword === 'CONTAINED') this.expectKeyword('BY', 'BY after CONTAINED');
        const operator = keyword === 'CONTAINED' ? 'CONTAINED BY' : keyword;
        const values = this.parseList(operator);
        return { kind: 'array', operator, field, values, span: this.spanFrom(start) };
      }
      case 'IS': {
        this.advance();
        const negated = this.peekKeyword('NOT');
        if (negated) this.advance();
        this.expectKeyword('NULL', negated ? 'NULL after IS NOT' : 'NULL or NOT NULL after IS');
        return { kind: 'isNull', negated, field, span: this.spanFrom(start) };
      }
      case 'BETWEEN': {
        this.advance();
        const low = this.parseLiteral();
        this.expectKeyword('AND', 'AND between the bounds of BETWEEN');
        const high = this.parseLiteral();
        return { kind: 'between', field, low, high, span: this.spanFrom(start) };
      }
    }
    const path = this.#source.slice(field.span.start, field.span.end);
    this.unexpected(
      token,
      `an operator after ${path} (=, !=, <, <=, >, >=, LIKE, ILIKE, IN, IS, BETWEEN, CONTAINS, CONTAINED BY or OVERLAPS)`,
    );
  }

  /**
   * ```
   * '(' Literal (',' Literal)* ')'        (after IN, CONTAINS, CONTAINED BY, OVERLAPS)
   * ```
   */
  parseList(operator: string): Literal[] {
    this.expectToken('(', `"(" after ${operator}`);
    if (this.peekToken(')')) {
      this.unexpected(this.peek(), `at least one value in the ${operator} list`);
    }
    const values = [this.parseLiteral()];
    while (this.peekToken(',')) {
      this.advance();
      values.push(this.parseLiteral());
    }
    this.expectToken(')', `"," or ")" in the ${operator} list`);
    return values;
  }

  /**
   * ```
   * Path := Aggregate | Name ('.' Name)*   (an aggregate only where `aggregates` allows it)
   * ```
   * Elsewhere an aggregate's call is refused with where it belongs: a filter tests rows, before
   * they are grouped.
   */
  parsePath(aggregates: boolean): Path {
    const first = this.peek();
    if (first.kind === 'name' && this.startsAggregate()) {
      if (!aggregates) {
        this.fail(
          first.span.start,
          `${first.value.toUpperCase()}(...) cannot be used in a filter, which tests rows before they are grouped. ` +
            'Select the aggregate and test it in HAVING after the selection: `{ category COUNT(*) } HAVING count > 5`.',
        );
      }
      const call = this.parseAggregateCall();
      return {
        kind: 'path',
        segments: [aggregateKey(call)],
        aggregate: call,
        span: this.spanFrom(first.span.start),
      };
    }
    if (!aggregates && this.peekKeyword('CARDINALITY') && this.peekToken('(', 1)) {
      this.advance();
      this.advance();
      const inner = this.parsePath(false);
      if (inner.cardinality)
        this.fail(inner.span.start, 'CARDINALITY takes a field, not CARDINALITY(...).');
      this.expectToken(')', '")" to close CARDINALITY(...)');
      return { ...inner, cardinality: true, span: this.spanFrom(first.span.start) };
    }
    this.expectName('a field name');
    const segments = [first.value];
    while (this.peekToken('.')) {
      this.advance();
      segments.push(this.expectName('a field name after "."').value);
    }
    const json = this.parseJsonSteps();
    const span = this.spanFrom(first.span.start);
    return json.length > 0
      ? { kind: 'path', segments, json, span }
      : { kind: 'path', segments, span };
  }

  /**
   * ```
   * JsonSteps := ('->' (String | Int))*
   * ```
   */
  parseJsonSteps(): JsonStep[] {
    const steps: JsonStep[] = [];
    while (this.peekToken('->')) {
      const arrow = this.advance();
      if (steps.length >= MAX_JSON_STEPS) {
        this.fail(
          arrow.span.start,
          `JSON path too deep: more than ${MAX_JSON_STEPS} steps. Select the value higher up and read into it in your code.`,
        );
      }
      const step = this.peek();
      if (step.kind === 'string') steps.push(this.advance().value);
      else if (
        step.kind === 'number' &&
        /^[0-9]+$/.test(step.value) &&
        Number.isSafeInteger(Number(step.value))
      ) {
        steps.push(Number(this.advance().value));
      } else this.unexpected(step, 'a key (\'name\') or an array index (0, 1, …) after "->"');
    }
    return steps;
  }

  /**
   * ```
   * Literal := String | Number | 'true' | 'false' | 'NULL'
   * ```
   */
  parseLiteral(): Literal {
    const token = this.peek();
    const { span } = token;
    if (token.kind === 'string') {
      this.advance();
      return { kind: 'string', value: token.value, span };
    }
    if (token.kind === 'number') {
      this.advance();
      return { kind: 'number', text: token.value, span };
    }
    if (token.kind === 'name' && !token.quoted) {
      switch (token.value.toLowerCase()) {
        case 'true':
          this.advance();
          return { kind: 'boolean', value: true, span };
        case 'false':
          this.advance();
          return { kind: 'boolean', value: false, span };
        case 'null':
          this.advance();
          return { kind: 'null', span };
      }
    }
    if (token.kind === 'name' && token.quoted) {
      // The likeliest mistake of all, from habits of other languages: "text" for a string.
      const asString = `'${token.value.replaceAll("'", "''")}'`;
      this.unexpected(token, VALUE_EXPECTED, ` Strings take single quotes: ${asString}.`);
    }
    this.unexpected(token, VALUE_EXPECTED);
  }

  /**
   * ```
   * Selection := '{' Item (','? Item)* '}'
   * ```
   */
  parseSelection(): SelectionItem[] {
    const open = this.expectToken('{');
    this.openSelection(open);
    if (this.peekToken('}')) {
      this.fail(
        this.peek().span.start,
        'Empty selection: list at least one field between "{" and "}".',
      );
    }
    const items = [this.parseItem(false)];
    while (!this.peekToken('}')) {
      const comma = this.peekToken(',');
      if (comma) this.advance();
      items.push(this.parseItem(comma));
    }
    this.advance();
    this.#selectionDepth--;
    return items;
  }

  /**
   * ```
   * Item := '*' | '...' | Aggregate | Name Filter? Selection Clauses | Name
   * ```
   * `count(` always starts an aggregate; a relation called count must be quoted.
   */
  parseItem(afterComma: boolean): SelectionItem {
    const token = this.peek();
    if (token.kind === 'punctuation' && (token.value === '*' || token.value === '...')) {
      this.advance();
      const kind = token.value === '*' ? 'allScalars' : 'allWithRelations';
      return { kind, span: token.span };
    }
    if (token.kind === 'name') {
      if (this.startsAggregate()) {
        const call = this.parseAggregateCall();
        return { kind: 'aggregate', ...call, span: this.spanFrom(token.span.start) };
      }
      if (this.peekToken('(', 1) || this.peekToken('{', 1)) return this.parseRelation();
      this.advance();
      const json = this.parseJsonSteps();
      if (json.length > 0) {
        return { kind: 'field', name: token.value, json, span: this.spanFrom(token.span.start) };
      }
      return { kind: 'field', name: token.value, span: token.span };
    }
    if (afterComma) this.unexpected(token, 'a field after ","');
    this.unexpected(token, token.kind === 'eof' ? '"}"' : 'a field, "*", "..." or "}"');
  }

  /** Whether the next tokens start an aggregate: `count(`, `MAX(`; a quoted name never does. */
  startsAggregate(): boolean {
    const token = this.peek();
    return (
      token.kind === 'name' &&
      !token.quoted &&
      AGGREGATES.has(token.value.toUpperCase()) &&
      this.peekToken('(', 1)
    );
  }

  /**
   * ```
   * Aggregate := 'COUNT' '(' ('*' | 'DISTINCT'? Name) ')'
   *            | ('SUM' | 'AVG' | 'MIN' | 'MAX') '(' Name ')'
   * ```
   * DISTINCT is a keyword only before a name, so a field called `distinct` can be counted.
   */
  parseAggregateCall(): AggregateCall {
    const fnToken = this.advance();
    const fn = fnToken.value.toUpperCase() as AggregateFunction;
    this.expectToken('(');
    let field: string | null = null;
    let distinct = false;
    if (fn === 'COUNT' && this.peekToken('*')) {
      this.advance();
    } else {
      if (this.peekKeyword('DISTINCT') && this.peek(1).kind === 'name') {
        if (fn !== 'COUNT') {
          this.fail(
            this.peek().span.start,
            `DISTINCT is allowed in COUNT(...) only: ${fn} of the distinct values is ${fn} of all of them${fn === 'MIN' || fn === 'MAX' ? '' : ', which is not what you meant'}.`,
          );
        }
        this.advance();
        distinct = true;
      }
      const hint = this.peekToken('*') ? ' Only COUNT accepts "*".' : '';
      field = this.expectName(`a field name in ${fn}(...)`, hint).value;
    }
    this.expectToken(')', `")" to close ${fn}(...)`);
    return { fn, field, distinct };
  }

  /**
   * ```
   * Name Filter? Selection Clauses        (the relation form of Item)
   * ```
   */
  parseRelation(): SelectionItem {
    const nameToken = this.advance();
    const name = nameToken.value;
    const filter = this.peekToken('(') ? this.parseFilter() : null;
    if (!this.peekToken('{')) {
      this.unexpected(this.peek(), `"{" after the filter of relation ${name}`);
    }
    const selection = this.parseSelection();
    const { having, orderBy, limit, offset } = this.parseClauses(false);
    const query = { filter, selection, having, orderBy, limit, offset };
    return { kind: 'relation', name, query, span: this.spanFrom(nameToken.span.start) };
  }

  /**
   * ```
   * Clauses := ('HAVING' Or)? ('ORDER' 'BY' Sort (',' Sort)*)? ('LIMIT' Int)?
   *            ('OFFSET' Int)? ('AFTER' String)?   (AFTER only at the top level)
   * ```
   * In a relation's selection the parent's next field may be called `order` or `limit`, so
   * there a keyword starts a clause only when followed by what that clause needs (BY, a number,
   * a string, a condition); at the top level nothing but a clause can follow, so a keyword
   * always does.
   */
  parseClauses(topLevel: boolean): Clauses {
    let having: Condition | null = null;
    let orderBy: SortItem[] = [];
    let limit: number | null = null;
    let offset: number | null = null;
    let after: string | null = null;
    let reached = -1;
    for (let clause = this.peekClause(topLevel); clause; clause = this.peekClause(topLevel)) {
      const keyword = this.advance();
      const rank = CLAUSES.indexOf(clause);
      if (rank === reached) this.fail(keyword.span.start, `Duplicate ${clause} clause.`);
      if (rank < reached) {
        this.fail(keyword.span.start, `${clause} must come before ${CLAUSES[reached]}.`);
      }
      reached = rank;
      switch (clause) {
        case 'HAVING':
          having = this.parseHaving();
          break;
        case 'ORDER BY':
          this.expectKeyword('BY', 'BY after ORDER');
          orderBy = [this.parseSort()];
          while (this.peekToken(',')) {
            const comma = this.advance();
            if (orderBy.length >= this.#limits.maxSortKeys) {
              this.tooComplex(
                comma,
                'maxSortKeys',
                `ORDER BY has more than ${this.#limits.maxSortKeys} keys (limit: ${this.#limits.maxSortKeys} written keys, repeats included). ` +
                  'Sort by fewer fields; a repeated field adds nothing.',
              );
            }
            orderBy.push(this.parseSort());
          }
          break;
        case 'LIMIT':
          limit = this.parseCount('LIMIT');
          break;
        case 'OFFSET':
          offset = this.parseCount('OFFSET');
          break;
        case 'AFTER': {
          if (!topLevel) {
            this.fail(
              keyword.span.start,
              'AFTER is only allowed at the top level: a relation cannot be paged by cursor.',
            );
          }
          const cursor = this.peek();
          if (cursor.kind !== 'string') this.unexpected(cursor, 'a cursor string after AFTER');
          after = this.advance().value;
          break;
        }
      }
    }
    return { having, orderBy, limit, offset, after };
  }

  /**
   * ```
   * 'HAVING' Or        (its paths may be aggregates: `HAVING COUNT(*) > 5 AND max_price < 10`)
   * ```
   */
  parseHaving(): Condition {
    this.#inHaving = true;
    const condition = this.parseOr();
    this.#inHaving = false;
    return condition;
  }

  /**
   * ```
   * Sort := Path ('ASC' | 'DESC')?
   * ```
   */
  parseSort(): SortItem {
    if (this.peek().kind !== 'name') this.unexpected(this.peek(), 'a field to sort by');
    const field = this.parsePath(true);
    let direction: 'ASC' | 'DESC' = 'ASC';
    if (this.peekKeyword('ASC')) {
      this.advance();
    } else if (this.peekKeyword('DESC')) {
      this.advance();
      direction = 'DESC';
    }
    return { field, direction, span: this.spanFrom(field.span.start) };
  }

  /**
   * ```
   * Int := digits            (after LIMIT and OFFSET)
   * ```
   */
  parseCount(keyword: 'LIMIT' | 'OFFSET'): number {
    const token = this.peek();
    if (token.kind !== 'number' || !/^[0-9]+$/.test(token.value)) {
      const found = token.kind === 'number' ? `"${token.value}"` : this.describe(token);
      this.fail(
        this.offsetOf(token),
        `Expected a non-negative integer after ${keyword}, found ${found}.`,
      );
    }
    const value = Number(token.value);
    if (!Number.isSafeInteger(value)) {
      this.fail(token.span.start, `${keyword} ${token.value} is too large.`);
    }
    this.advance();
    return value;
  }

  // Primitives

  /** The token `ahead` tokens on, without consuming anything (past the end, `eof`). */
  peek(ahead = 0): Token {
    while (this.#lookahead.length <= ahead) this.#lookahead.push(this.#lexer.next());
    return this.#lookahead[ahead]!;
  }

  /** Consumes the next token and returns it; `eof` is never consumed. */
  advance(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') {
      this.#lookahead.shift();
      this.#lastEnd = token.span.end;
    }
    return token;
  }

  /** Whether the token `ahead` tokens on is this punctuation or operator. */
  peekToken(value: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return (token.kind === 'punctuation' || token.kind === 'operator') && token.value === value;
  }

  /** Whether the token `ahead` tokens on is this keyword: an unquoted name, in any case. */
  peekKeyword(keyword: string, ahead = 0): boolean {
    const token = this.peek(ahead);
    return token.kind === 'name' && !token.quoted && token.value.toUpperCase() === keyword;
  }

  /** Consumes this punctuation or operator, or fails with `Expected <expected>, found …`. */
  expectToken(value: string, expected = `"${value}"`): Token {
    if (!this.peekToken(value)) this.unexpected(this.peek(), expected);
    return this.advance();
  }

  /** Consumes this keyword, or fails with `Expected <expected>, found …`. */
  expectKeyword(keyword: string, expected: string = keyword): Token {
    if (!this.peekKeyword(keyword)) this.unexpected(this.peek(), expected);
    return this.advance();
  }

  /** Consumes a name, quoted or not, or fails with `Expected <expected>, found …<hint>`. */
  expectName(expected: string, hint = ''): Token {
    if (this.peek().kind !== 'name') this.unexpected(this.peek(), expected, hint);
    return this.advance();
  }

  /** The clause the next tokens start, if any (see `parseClauses` for the nested rule). */
  peekClause(topLevel: boolean): Clause | null {
    const token = this.peek();
    if (token.kind !== 'name' || token.quoted) return null;
    const keyword = token.value.toUpperCase();
    switch (keyword) {
      case 'HAVING':
        return topLevel || this.startsNestedHaving() ? 'HAVING' : null;
      case 'ORDER':
        return topLevel || this.peekKeyword('BY', 1) ? 'ORDER BY' : null;
      case 'LIMIT':
      case 'OFFSET':
        return topLevel || this.peek(1).kind === 'number' ? keyword : null;
      case 'AFTER':
        return topLevel || this.peek(1).kind === 'string' ? 'AFTER' : null;
    }
    return null;
  }

  /**
   * Whether `having` in a relation's selection starts a HAVING clause rather than naming the
   * parent's next field: it does when a condition follows, an aggregate's call (`COUNT(`) or a
   * name and then an operator (`count >`, `max_price IS`).
   */
  startsNestedHaving(): boolean {
    const next = this.peek(1);
    if (next.kind !== 'name') return false;
    if (!next.quoted && AGGREGATES.has(next.value.toUpperCase()) && this.peekToken('(', 2)) {
      return true;
    }
    const after = this.peek(2);
    if (after.kind === 'operator') return true;
    return (
      after.kind === 'name' && !after.quoted && CONDITION_KEYWORDS.has(after.value.toUpperCase())
    );
  }

  /** What may still follow the top-level selection, for the error on anything else. */
  whatMayFollow(clauses: Clauses): string {
    let reached = -1;
    if (clauses.having !== null) reached = 0;
    if (clauses.orderBy.length > 0) reached = 1;
    if (clauses.limit !== null) reached = 2;
    if (clauses.offset !== null) reached = 3;
    if (clauses.after !== null) reached = 4;
    const options: string[] = reached === 0 ? ['AND', 'OR'] : reached === 1 ? ['","'] : [];
    options.push(...CLAUSES.slice(reached + 1), 'end of query');
    const last = options.pop()!;
    return options.length === 0 ? last : `${options.join(', ')} or ${last}`;
  }

  /** Fails at `token` with `Expected <expected>, found <token>.<hint>`. */
  unexpected(token: Token, expected: string, hint = ''): never {
    this.fail(this.offsetOf(token), `Expected ${expected}, found ${this.describe(token)}.${hint}`);
  }

  /** Throws the parse error `detail` at `offset`. */
  fail(offset: number, detail: string): never {
    throw new QueryParseError(this.#source, offset, detail);
  }

  /** `end of query`, `name "foo"`, `string 'abc'`, `number 12` or `"{"`. */
  describe(token: Token): string {
    return describeToken(token, this.#source);
  }

  /**
   * Where to point at a token. The end of the query is pointed at just after the last token,
   * not after trailing blank lines and comments, so the caret sits where something is missing.
   */
  offsetOf(token: Token): number {
    return token.kind === 'eof' ? this.#lastEnd : token.span.start;
  }

  /** From `start` to the end of the last consumed token. */
  spanFrom(start: number): Span {
    return { start, end: this.#lastEnd };
  }

  /** Flattens nested nodes of the same kind: `a AND (b AND c)` is one AND of three. */
  combine(kind: 'and' | 'or', operands: Condition[], start: number): Condition {
    if (operands.length === 1) return operands[0]!;
    const flat = operands.flatMap((operand) =>
      operand.kind === kind ? operand.operands : [operand],
    );
    return { kind, operands: flat, span: this.spanFrom(start) };
  }

  /** Counts one more open selection at `open`; the caller decrements when it closes. */
  openSelection(open: Token): void {
    this.#selectionDepth++;
    const limit = this.#limits.maxSelectionDepth;
    if (this.#selectionDepth > limit) {
      this.tooComplex(
        open,
        'maxSelectionDepth',
        `Selections nested too deeply: more than ${limit} levels (limit: ${limit} nested selections). ` +
          'Select fewer levels of relations, and query deeper ones separately.',
      );
    }
  }

  /** Counts one more open parenthesis of a filter; the caller decrements when it closes. */
  openParenthesis(open: Token): void {
    this.#filterDepth++;
    const limit = this.#limits.maxFilterDepth;
    if (this.#filterDepth > limit) {
      this.tooComplex(
        open,
        'maxFilterDepth',
        `Filter nested too deeply: more than ${limit} levels of parentheses (limit: ${limit}). ` +
          'Leave out parentheses that only repeat a grouping: AND binds tighter than OR.',
      );
    }
  }

  /** Counts one more condition; refused past `maxConditions` before it is parsed. */
  countCondition(at: Token): void {
    this.#conditions++;
    const limit = this.#limits.maxConditions;
    if (this.#conditions > limit) {
      this.tooComplex(
        at,
        'maxConditions',
        `Too many conditions: more than ${limit} conditions in the query's filters (limit: ${limit}). ` +
          'Use IN (…) for a list of values instead of a chain of = … OR = ….',
      );
    }
  }

  tooComplex(at: Token, limit: Exclude<ParseLimitName, 'maxTokens'>, detail: string): never {
    throw new QueryTooComplexError(this.#source, at.span.start, limit, detail);
  }
}
