import { type AggregateFunction, aggregateKey } from '@replix/query';
import type { InstanceSchema } from '../components/instance-schema.ts';
import type { EditorToken } from './query-tokens.ts';

/** Which relations a field position accepts besides the table's columns. */
export type RelationChoice = 'all' | 'to-one' | 'none';

/** What may be written where the cursor is. */
export type Expected =
  | { readonly kind: 'table' }
  | {
      readonly kind: 'field';
      readonly table: string;
      readonly relations: RelationChoice;
      /** In a selection: aggregates may be written too; in COUNT(: DISTINCT. */
      readonly also?: 'aggregates' | 'distinct';
    }
  /** In HAVING, or ORDER BY of a grouped selection: its GROUP BY fields and aggregate keys. */
  | { readonly kind: 'groupKey'; readonly fields: string[]; readonly aggregates: string[] }
  | { readonly kind: 'nothing' };

/** Open brackets around the cursor; a frame's table is what names inside it refer to. */
interface Frame {
  readonly kind: 'selection' | 'filter' | 'group' | 'call' | 'list';
  readonly table: string | undefined;
  /** A selection's plain fields and its aggregates' keys, as far as they are written. */
  readonly fields?: string[];
  readonly aggregates?: string[];
  /** A call's function, and what is written in it so far. */
  readonly call?: { fn: AggregateFunction; field: string | null; distinct: boolean };
}

/** A selection's keys once it closed: what HAVING and a grouped ORDER BY name. */
interface ClosedKeys {
  readonly fields: string[];
  readonly aggregates: string[];
}

const NOTHING: Expected = { kind: 'nothing' };
const OPEN_ENDED = new Set(['name', 'keyword', 'comment', 'invalid']);
const AGGREGATES = new Set(['COUNT', 'SUM', 'AVG', 'MIN', 'MAX']);
/** After these a number, a string or another keyword comes, never a name from the schema. */
const NO_NAME_AFTER = new Set(['ORDER', 'LIMIT', 'OFFSET', 'AFTER', 'ASC', 'DESC']);
/** After these a list of values comes in parentheses: IN, CONTAINS, CONTAINED BY, OVERLAPS. */
const LIST_KEYWORDS = ['IN', 'CONTAINS', 'BY', 'OVERLAPS'];
/** Where a clause ends a HAVING condition. */
const CLAUSE_KEYWORDS = new Set(['ORDER', 'LIMIT', 'OFFSET', 'AFTER']);

/**
 * Where the word at `pos` starts and what it may be: a table at the start, a field or relation
 * of the table whose `{ }` or `( )` the cursor is in (a relation's own table inside its
 * braces), the fields of a path's last relation after `.`, and fields after ORDER BY. A small
 * walk over the tokens before the cursor, not the parser: the text being typed is rarely a
 * whole query.
 */
export function expectedAt(
  tokens: readonly EditorToken[],
  pos: number,
  schema: InstanceSchema,
): { from: number; expected: Expected } {
  // A word, a comment or an unterminated string takes in the cursor at its end; a symbol does not.
  const inside = tokens.find(
    (token) =>
      token.from < pos && (pos < token.to || (pos === token.to && OPEN_ENDED.has(token.kind))),
  );
  if (inside && !isWord(inside)) {
    // In a string, a comment or a quoted name being typed: nothing to offer.
    return { from: pos, expected: NOTHING };
  }
  const from = inside?.from ?? pos;
  const before = tokens.filter(
    (token) => token.to <= from && token.kind !== 'comment' && token.kind !== 'invalid',
  );
  return { from, expected: walk(before, schema) };
}

function walk(before: readonly EditorToken[], schema: InstanceSchema): Expected {
  const stack: Frame[] = [];
  let topTable: string | undefined;
  /** The table of the `{ }` or `( )` closed last: a `{` after a filter, or an ORDER BY, is about it. */
  let closed: string | undefined;
  /** The keys of the selection closed last, when it has aggregates. */
  let closedKeys: ClosedKeys | undefined;
  before.forEach((token, index) => {
    const previous = before[index - 1];
    const next = before[index + 1];
    const current = stack.at(-1);
    if (isWord(token)) {
      if (topTable === undefined && !isSymbol(previous, '@')) topTable = token.value;
      if (current?.call) {
        if (isKeyword(token, 'DISTINCT') && isSymbol(previous, '(')) current.call.distinct = true;
        else current.call.field = token.value;
      } else if (current?.kind === 'selection' && !isSymbol(next, '(') && !isSymbol(next, '{')) {
        current.fields?.push(token.value);
      }
      return;
    }
    if (token.kind !== 'punctuation') return;
    switch (token.value) {
      case '(':
        if (!current) stack.push({ kind: 'filter', table: topTable });
        else if (current.kind === 'selection' && isWord(previous)) {
          const fn = previous.value.toUpperCase();
          if (AGGREGATES.has(fn)) {
            const call = { fn: fn as AggregateFunction, field: null, distinct: false };
            stack.push({ kind: 'call', table: current.table, call });
          } else {
            const table = relationTarget(schema, current.table, previous.value);
            stack.push({ kind: 'filter', table });
          }
        } else if (LIST_KEYWORDS.some((keyword) => isKeyword(previous, keyword))) {
          stack.push({ kind: 'list', table: current.table });
        } else stack.push({ kind: 'group', table: current.table });
        break;
      case ')':
        if (current && current.kind !== 'selection') {
          stack.pop();
          if (current.kind === 'filter') closed = current.table;
          if (current.call) stack.at(-1)?.aggregates?.push(aggregateKey(current.call));
        }
        break;
      case '{': {
        let table: string | undefined;
        if (isSymbol(previous, ')')) table = closed;
        else if (!current) table = topTable;
        else if (isWord(previous)) table = relationTarget(schema, current.table, previous.value);
        stack.push({ kind: 'selection', table, fields: [], aggregates: [] });
        break;
      }
      case '}':
        while (stack.length > 0) {
          const frame = stack.pop()!;
          if (frame.kind === 'selection') {
            closed = frame.table;
            const aggregates = frame.aggregates ?? [];
            closedKeys =
              aggregates.length > 0 ? { fields: frame.fields ?? [], aggregates } : undefined;
            break;
          }
        }
        break;
    }
  });

  const previous = before.at(-1);
  const current = stack.at(-1);
  if (topTable === undefined) return isSymbol(previous, '@') ? NOTHING : { kind: 'table' };
  if (isSymbol(previous, '.')) return afterPath(before, schema, current, closed);
  if (closedKeys && (inOrderBy(before) || inHaving(before))) {
    return { kind: 'groupKey', ...closedKeys };
  }
  if (inOrderBy(before)) return fieldOf(closed, 'to-one');
  if (!current) return NOTHING;
  switch (current.kind) {
    case 'selection':
      return isWord(previous) && NO_NAME_AFTER.has(previous.value.toUpperCase())
        ? NOTHING
        : fieldOf(current.table, 'all', 'aggregates');
    case 'filter':
    case 'group':
      return isSymbol(previous, '(') || isKeyword(previous, 'AND') || isKeyword(previous, 'OR')
        ? fieldOf(current.table, 'all')
        : NOTHING;
    case 'call':
      if (isKeyword(previous, 'DISTINCT')) return fieldOf(current.table, 'none');
      if (!isSymbol(previous, '(')) return NOTHING;
      return fieldOf(current.table, 'none', current.call?.fn === 'COUNT' ? 'distinct' : undefined);
    case 'list':
      return NOTHING;
  }
}

/** After HAVING, or AND or OR of its condition: a condition's field comes next. */
function inHaving(before: readonly EditorToken[]): boolean {
  const last = before.at(-1);
  if (isKeyword(last, 'HAVING')) return true;
  if (!isKeyword(last, 'AND') && !isKeyword(last, 'OR')) return false;
  for (let index = before.length - 2; index >= 0; index--) {
    const token = before[index]!;
    if (isKeyword(token, 'HAVING')) return true;
    if (isSymbol(token, '{') || isSymbol(token, '}')) return false;
    if (token.kind === 'keyword' && CLAUSE_KEYWORDS.has(token.value.toUpperCase())) return false;
  }
  return false;
}

/**
 * `a.b.`: the fields of the table b leads to, walking relations from the filter's table, or
 * from the sorted table in an ORDER BY.
 */
function afterPath(
  before: readonly EditorToken[],
  schema: InstanceSchema,
  current: Frame | undefined,
  closed: string | undefined,
): Expected {
  const segments: string[] = [];
  let index = before.length - 2;
  for (; index >= 0; index -= 2) {
    const segment = before[index];
    if (!isWord(segment)) return NOTHING;
    segments.unshift(segment.value);
    if (!isSymbol(before[index - 1], '.')) break;
  }
  let target = inOrderBy(before.slice(0, index))
    ? closed
    : current?.kind === 'filter' || current?.kind === 'group'
      ? current.table
      : undefined;
  for (const segment of segments) target = relationTarget(schema, target, segment);
  return fieldOf(target, 'all');
}

/** After `ORDER BY` or a comma of its list, with only sort keys in between. */
function inOrderBy(before: readonly EditorToken[]): boolean {
  const last = before.at(-1);
  if (!isKeyword(last, 'BY') && !isSymbol(last, ',')) return false;
  for (let index = before.length - 1; index >= 1; index--) {
    const token = before[index]!;
    if (isKeyword(token, 'BY')) return isKeyword(before[index - 1], 'ORDER');
    const sortKey =
      isWord(token) || isSymbol(token, '.') || isSymbol(token, ',') || token.kind === 'keyword';
    if (!sortKey) return false;
  }
  return false;
}

function fieldOf(
  table: string | undefined,
  relations: RelationChoice,
  also?: 'aggregates' | 'distinct',
): Expected {
  if (table === undefined) return NOTHING;
  return also ? { kind: 'field', table, relations, also } : { kind: 'field', table, relations };
}

/** The table a relation of `table` leads to; undefined when either is unknown. */
export function relationTarget(
  schema: InstanceSchema,
  table: string | undefined,
  relation: string,
): string | undefined {
  if (table === undefined) return undefined;
  const found = schema.tables?.find((candidate) => candidate.name === table);
  return found?.relations?.find((candidate) => candidate.name === relation)?.table;
}

function isWord(
  token: EditorToken | undefined,
): token is EditorToken & { kind: 'name' | 'keyword' } {
  return token?.kind === 'name' || token?.kind === 'keyword';
}

function isSymbol(token: EditorToken | undefined, symbol: string): boolean {
  return token?.kind === 'punctuation' && token.value === symbol;
}

function isKeyword(token: EditorToken | undefined, keyword: string): boolean {
  return token?.kind === 'keyword' && token.value.toUpperCase() === keyword;
}
