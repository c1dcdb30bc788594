/**
 * The query language's syntax tree. Nodes are plain immutable data; every node that a later
 * phase may report an error on carries the `Span` of its source text.
 *
 * Grammar (keywords case-insensitive; commas between selection items optional):
 *
 *   Query       := Pragma* Name Filter? Selection Clauses EOF
 *   Pragma      := '@' Name                       (only `@lenient` is known)
 *   Filter      := '(' Or ')'
 *   Or          := And ('OR' And)*
 *   And         := Primary ('AND' Primary)*
 *   Primary     := '(' Or ')' | Predicate
 *   Predicate   := Path ( CompareOp Literal
 *                       | ('LIKE' | 'ILIKE') String
 *                       | 'IN' '(' Literal (',' Literal)* ')'
 *                       | ('CONTAINS' | 'CONTAINED' 'BY' | 'OVERLAPS') '(' Literal (',' Literal)* ')'
 *                       | 'IS' 'NOT'? 'NULL'
 *                       | 'BETWEEN' Literal 'AND' Literal )
 *   Path        := Aggregate | 'CARDINALITY' '(' Names ')' | Names JsonSteps
 *                  (an aggregate only in HAVING and ORDER BY, CARDINALITY only in filters)
 *   Names       := Name ('.' Name)*
 *   JsonSteps   := ('->' (String | Int))*       (into a JSON field: a key, or an array index)
 *   Selection   := '{' Item (','? Item)* '}'
 *   Item        := '*' | '...' | Aggregate | Name Filter? Selection Clauses | Name JsonSteps
 *   Aggregate   := 'COUNT' '(' ('*' | 'DISTINCT'? Name) ')'
 *                | ('SUM' | 'AVG' | 'MIN' | 'MAX') '(' Name ')'
 *   Clauses     := ('HAVING' Or)? ('ORDER' 'BY' Sort (',' Sort)*)? ('LIMIT' Int)?
 *                  ('OFFSET' Int)? ('AFTER' String)?   (AFTER only at the top level)
 *   Sort        := Path ('ASC' | 'DESC')?
 *   Name        := [A-Za-z_][A-Za-z0-9_]* | '"' any chars, "" escapes '"' '"'
 *   Literal     := String | Number | 'true' | 'false' | 'NULL'
 *   String      := "'" any chars, '' escapes "'" "'"
 *   Number      := '-'? digits ('.' digits)? (('e' | 'E') ('+' | '-')? digits)?
 */

/** Half-open range of UTF-16 offsets into the query text. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

export type Literal =
  | { readonly kind: 'string'; readonly value: string; readonly span: Span }
  /** Numbers keep their exact source text so BIGINT and DECIMAL comparisons lose no digit. */
  | { readonly kind: 'number'; readonly text: string; readonly span: Span }
  | { readonly kind: 'boolean'; readonly value: boolean; readonly span: Span }
  | { readonly kind: 'null'; readonly span: Span };

/**
 * A field, or a chain of relations ending in a field: `customer.country.code`. In HAVING and
 * ORDER BY an aggregate may be written as its call (`COUNT(*)`, `MAX(price)`): then `segments`
 * is its one output key (`count`, `max_price`) and `aggregate` the call as written.
 */
export interface Path {
  readonly kind: 'path';
  readonly segments: readonly string[];
  readonly aggregate?: AggregateCall;
  /** `CARDINALITY(tags)`: the number of elements of the array field the segments name. */
  readonly cardinality?: true;
  /** `data->'address'->'city'`, `tags->0`: the steps into the JSON field the segments name. */
  readonly json?: readonly JsonStep[];
  readonly span: Span;
}

/** A step into a JSON value: an object's key, or an array's index (from 0). */
export type JsonStep = string | number;

/** How an array field is tested against a list: PostgreSQL's `@>`, `<@` and `&&`. */
export type ArrayOperator = 'CONTAINS' | 'CONTAINED BY' | 'OVERLAPS';

export type CompareOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Condition =
  | {
      readonly kind: 'compare';
      readonly operator: CompareOperator;
      readonly field: Path;
      readonly value: Literal;
      readonly span: Span;
    }
  | {
      readonly kind: 'like';
      readonly caseInsensitive: boolean;
      readonly field: Path;
      readonly pattern: string;
      readonly span: Span;
    }
  | {
      readonly kind: 'in';
      readonly field: Path;
      readonly values: readonly Literal[];
      readonly span: Span;
    }
  | {
      readonly kind: 'array';
      readonly operator: ArrayOperator;
      readonly field: Path;
      readonly values: readonly Literal[];
      readonly span: Span;
    }
  | {
      readonly kind: 'isNull';
      readonly negated: boolean;
      readonly field: Path;
      readonly span: Span;
    }
  | {
      readonly kind: 'between';
      readonly field: Path;
      readonly low: Literal;
      readonly high: Literal;
      readonly span: Span;
    }
  /** Two or more operands; nested ANDs (or ORs) are flattened into one node. */
  | { readonly kind: 'and'; readonly operands: readonly Condition[]; readonly span: Span }
  | { readonly kind: 'or'; readonly operands: readonly Condition[]; readonly span: Span };

export type AggregateFunction = 'COUNT' | 'SUM' | 'AVG' | 'MIN' | 'MAX';

/** An aggregate as written: `COUNT(*)`, `COUNT(DISTINCT city)`, `MAX(price)`. */
export interface AggregateCall {
  readonly fn: AggregateFunction;
  /** The field aggregated; null for COUNT(*). */
  readonly field: string | null;
  /** COUNT(DISTINCT field): counts the field's distinct non-NULL values. */
  readonly distinct: boolean;
}

export type SelectionItem =
  | {
      readonly kind: 'field';
      readonly name: string;
      /** `data->'city'`: the steps into a JSON field; absent for the field itself. */
      readonly json?: readonly JsonStep[];
      readonly span: Span;
    }
  /** `*`: every scalar field. */
  | { readonly kind: 'allScalars'; readonly span: Span }
  /** `...`: every scalar field plus one level of relations. */
  | { readonly kind: 'allWithRelations'; readonly span: Span }
  | {
      readonly kind: 'relation';
      readonly name: string;
      readonly query: SubQuery;
      readonly span: Span;
    }
  | ({ readonly kind: 'aggregate'; readonly span: Span } & AggregateCall);

export interface SortItem {
  readonly field: Path;
  readonly direction: 'ASC' | 'DESC';
  readonly span: Span;
}

/** What a nested relation selection and the top-level query have in common. */
export interface SubQuery {
  readonly filter: Condition | null;
  readonly selection: readonly SelectionItem[];
  /** HAVING: the condition a group's aggregates (and keys) must meet; null without. */
  readonly having: Condition | null;
  readonly orderBy: readonly SortItem[];
  /** Null when the query has no LIMIT clause. */
  readonly limit: number | null;
  readonly offset: number | null;
}

export interface Query extends SubQuery {
  readonly kind: 'query';
  readonly lenient: boolean;
  readonly table: { readonly name: string; readonly span: Span };
  /** The AFTER cursor text (empty string for the first page); null without AFTER. */
  readonly after: string | null;
  /** The query text the spans point into. */
  readonly source: string;
}
