import { describe, expect, it } from 'vitest';
import {
  type Condition,
  type Literal,
  type ParseOptions,
  parseQuery,
  type Query,
  QueryParseError,
  type SelectionItem,
} from '../src/index.ts';

/** The tree without spans and source text, for tests about structure only. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // Absent clauses and options are left out: most tests are about other parts.
    if ((key === 'having' && field === null) || (key === 'distinct' && field === false)) continue;
    if (key !== 'span' && key !== 'source') result[key] = shape(field);
  }
  return result;
}

function filterOf(source: string): unknown {
  return shape(parseQuery(source).filter);
}

function selectionOf(source: string): unknown {
  return shape(parseQuery(source).selection);
}

function parseError(source: string, options?: ParseOptions): QueryParseError {
  try {
    parseQuery(source, options);
  } catch (error) {
    if (error instanceof QueryParseError) return error;
    throw error;
  }
  throw new Error(`expected a parse error for: ${source}`);
}

/** The error's detail with its line and column, which is what most error tests pin. */
function errorAt(source: string, options?: ParseOptions): [string, number, number] {
  const { detail, position } = parseError(source, options);
  return [detail, position.line, position.column];
}

const path = (...segments: string[]) => ({ kind: 'path', segments });
const num = (text: string) => ({ kind: 'number', text });
const str = (value: string) => ({ kind: 'string', value });
const field = (name: string) => ({ kind: 'field', name });
const compare = (name: string, operator: string, value: unknown) => ({
  kind: 'compare',
  operator,
  field: path(...name.split('.')),
  value,
});
const a1 = compare('a', '=', num('1'));
const b2 = compare('b', '=', num('2'));
const c3 = compare('c', '=', num('3'));

describe('parseQuery: whole queries', () => {
  it('parses the smallest query, spans and source included', () => {
    const source = 'users { id }';
    expect(parseQuery(source)).toEqual({
      kind: 'query',
      lenient: false,
      table: { name: 'users', span: { start: 0, end: 5 } },
      filter: null,
      selection: [{ kind: 'field', name: 'id', span: { start: 8, end: 10 } }],
      having: null,
      orderBy: [],
      limit: null,
      offset: null,
      after: null,
      source,
    } satisfies Query);
  });

  it('parses every top-level part, spans included', () => {
    const source =
      "@lenient users (age >= 18) { id, orders { total } } ORDER BY name DESC LIMIT 10 OFFSET 20 AFTER 'c1'";
    const ageSpan = { start: 16, end: 19 };
    expect(parseQuery(source)).toEqual({
      kind: 'query',
      lenient: true,
      table: { name: 'users', span: { start: 9, end: 14 } },
      filter: {
        kind: 'compare',
        operator: '>=',
        field: { kind: 'path', segments: ['age'], span: ageSpan },
        value: { kind: 'number', text: '18', span: { start: 23, end: 25 } },
        span: { start: 16, end: 25 },
      },
      selection: [
        { kind: 'field', name: 'id', span: { start: 29, end: 31 } },
        {
          kind: 'relation',
          name: 'orders',
          query: {
            filter: null,
            selection: [{ kind: 'field', name: 'total', span: { start: 42, end: 47 } }],
            having: null,
            orderBy: [],
            limit: null,
            offset: null,
          },
          span: { start: 33, end: 49 },
        },
      ],
      having: null,
      orderBy: [
        {
          field: { kind: 'path', segments: ['name'], span: { start: 61, end: 65 } },
          direction: 'DESC',
          span: { start: 61, end: 70 },
        },
      ],
      limit: 10,
      offset: 20,
      after: 'c1',
      source,
    } satisfies Query);
  });

  it('reads keywords in any case', () => {
    const query = parseQuery(
      "@LENIENT users (a like 'x' aNd b Is nOt NuLl) { id } order by a desc limit 1 offset 2 after ''",
    );
    expect(shape(query)).toEqual({
      kind: 'query',
      lenient: true,
      table: { name: 'users' },
      filter: {
        kind: 'and',
        operands: [
          { kind: 'like', caseInsensitive: false, field: path('a'), pattern: 'x' },
          { kind: 'isNull', negated: true, field: path('b') },
        ],
      },
      selection: [field('id')],
      orderBy: [{ field: path('a'), direction: 'DESC' }],
      limit: 1,
      offset: 2,
      after: '',
    });
  });

  it('accepts @lenient more than once', () => {
    expect(parseQuery('@lenient @lenient t { id }').lenient).toBe(true);
  });

  it('accepts a quoted table name', () => {
    expect(parseQuery('"order items" { id }').table).toEqual({
      name: 'order items',
      span: { start: 0, end: 13 },
    });
  });

  it('takes whitespace of every kind, CRLF line ends and no whitespace at all', () => {
    expect(shape(parseQuery('\uFEFFusers\r\n{\tid\fname\v}'))).toEqual(
      shape(parseQuery('users { id name }')),
    );
    expect(shape(parseQuery('users(a=1){id}LIMIT 1'))).toEqual(
      shape(parseQuery('users ( a = 1 ) { id } LIMIT 1')),
    );
  });

  it('skips -- comments to the end of the line', () => {
    const source = '-- the users\nusers -- table\r\n{ id -- key\n name }--end';
    expect(shape(parseQuery(source))).toEqual(shape(parseQuery('users { id name }')));
  });

  it('does not read -- inside a string as a comment', () => {
    expect(filterOf("t (a = '--x') { id }")).toEqual(compare('a', '=', str('--x')));
  });
});

describe('parseQuery: selections', () => {
  it('parses *, ... and plain fields, with or without commas', () => {
    const items = [{ kind: 'allScalars' }, { kind: 'allWithRelations' }, field('id'), field('x')];
    expect(selectionOf('t { * ... id x }')).toEqual(items);
    expect(selectionOf('t { *, ..., id, x }')).toEqual(items);
    expect(selectionOf('t{*,...,id x}')).toEqual(items);
  });

  it('gives * and ... their spans', () => {
    expect(parseQuery('t { * ... }').selection).toEqual([
      { kind: 'allScalars', span: { start: 4, end: 5 } },
      { kind: 'allWithRelations', span: { start: 6, end: 9 } },
    ] satisfies SelectionItem[]);
  });

  it('parses aggregates, function names in any case', () => {
    const query = parseQuery('t { COUNT(*) count(id) Sum(total) avg ( price ) }');
    expect(query.selection).toEqual([
      { kind: 'aggregate', fn: 'COUNT', field: null, distinct: false, span: { start: 4, end: 12 } },
      {
        kind: 'aggregate',
        fn: 'COUNT',
        field: 'id',
        distinct: false,
        span: { start: 13, end: 22 },
      },
      {
        kind: 'aggregate',
        fn: 'SUM',
        field: 'total',
        distinct: false,
        span: { start: 23, end: 33 },
      },
      {
        kind: 'aggregate',
        fn: 'AVG',
        field: 'price',
        distinct: false,
        span: { start: 34, end: 47 },
      },
    ] satisfies SelectionItem[]);
  });

  it('parses MIN, MAX and COUNT(DISTINCT …); distinct alone is a field', () => {
    const query = parseQuery('t { min(a) MAX(b) COUNT(DISTINCT c) count(distinct) }');
    expect(query.selection).toEqual([
      { kind: 'aggregate', fn: 'MIN', field: 'a', distinct: false, span: { start: 4, end: 10 } },
      { kind: 'aggregate', fn: 'MAX', field: 'b', distinct: false, span: { start: 11, end: 17 } },
      { kind: 'aggregate', fn: 'COUNT', field: 'c', distinct: true, span: { start: 18, end: 35 } },
      {
        kind: 'aggregate',
        fn: 'COUNT',
        field: 'distinct',
        distinct: false,
        span: { start: 36, end: 51 },
      },
    ] satisfies SelectionItem[]);
  });

  it('parses HAVING before ORDER BY, its paths keys or aggregate calls', () => {
    const query = parseQuery(
      't { g COUNT(*) } HAVING COUNT(*) > 1 OR max_x IS NULL ORDER BY count(*) DESC',
    );
    expect(query.having).toMatchObject({
      kind: 'or',
      operands: [
        {
          kind: 'compare',
          operator: '>',
          field: { segments: ['count'], aggregate: { fn: 'COUNT', field: null, distinct: false } },
        },
        { kind: 'isNull', field: { segments: ['max_x'] } },
      ],
    });
    expect(query.orderBy[0]?.field).toMatchObject({
      segments: ['count'],
      aggregate: { fn: 'COUNT' },
    });
    expect(
      parseQuery('t { COUNT(DISTINCT c) } ORDER BY COUNT(DISTINCT c)').orderBy[0]?.field.segments,
    ).toEqual(['count_distinct_c']);
  });

  it('reads HAVING in a relation only where a condition follows it', () => {
    const nested = parseQuery('t { r { g COUNT(*) } HAVING count > 1 LIMIT 2 }');
    const relation = nested.selection[0] as Extract<SelectionItem, { kind: 'relation' }>;
    expect(relation.query.having).toMatchObject({ kind: 'compare', operator: '>' });
    expect(relation.query.limit).toBe(2);
    const fields = parseQuery('t { r { id } having other }').selection;
    expect(fields.map((item) => (item.kind === 'field' ? item.name : item.kind))).toEqual([
      'relation',
      'having',
      'other',
    ]);
  });

  it('reads keyword-named fields as fields', () => {
    expect(selectionOf('t { order limit count offset after sum avg by asc desc and or }')).toEqual(
      [
        'order',
        'limit',
        'count',
        'offset',
        'after',
        'sum',
        'avg',
        'by',
        'asc',
        'desc',
        'and',
        'or',
      ].map(field),
    );
  });

  it('reads a quoted name as a field even when it spells an aggregate', () => {
    expect(selectionOf('t { "count" }')).toEqual([field('count')]);
    // Quoted, count( starts a relation with a filter rather than an aggregate.
    expect(selectionOf('t { "count" (a = 1) { id } }')).toEqual([
      {
        kind: 'relation',
        name: 'count',
        query: { filter: a1, selection: [field('id')], orderBy: [], limit: null, offset: null },
      },
    ]);
  });

  it('unescapes quoted names', () => {
    const query = parseQuery('t { "first name" "say ""hi""" "x" }');
    expect(shape(query.selection)).toEqual([field('first name'), field('say "hi"'), field('x')]);
    expect(query.selection[1]!.span).toEqual({ start: 17, end: 29 });
  });

  it('parses relations with a filter, a selection and clauses', () => {
    expect(
      selectionOf('t { orders (total > 10) { id total } ORDER BY total DESC LIMIT 5 OFFSET 1 }'),
    ).toEqual([
      {
        kind: 'relation',
        name: 'orders',
        query: {
          filter: compare('total', '>', num('10')),
          selection: [field('id'), field('total')],
          orderBy: [{ field: path('total'), direction: 'DESC' }],
          limit: 5,
          offset: 1,
        },
      },
    ]);
  });

  it('spans a relation from its name to the end of its clauses', () => {
    const source = 't { id orders { id } LIMIT 5 name }';
    const query = parseQuery(source);
    expect(query.selection[1]!.span).toEqual({ start: 7, end: 28 });
    expect(query.selection[2]).toEqual({
      kind: 'field',
      name: 'name',
      span: { start: 29, end: 33 },
    });
  });

  it('nests relations in relations', () => {
    expect(selectionOf('t { a { b { c { id } LIMIT 1 } } }')).toEqual([
      {
        kind: 'relation',
        name: 'a',
        query: {
          filter: null,
          selection: [
            {
              kind: 'relation',
              name: 'b',
              query: {
                filter: null,
                selection: [
                  {
                    kind: 'relation',
                    name: 'c',
                    query: {
                      filter: null,
                      selection: [field('id')],
                      orderBy: [],
                      limit: 1,
                      offset: null,
                    },
                  },
                ],
                orderBy: [],
                limit: null,
                offset: null,
              },
            },
          ],
          orderBy: [],
          limit: null,
          offset: null,
        },
      },
    ]);
  });

  it('gives clause keywords after a nested selection to the parent when the clause cannot start', () => {
    const plain = {
      filter: null,
      selection: [field('id')],
      orderBy: [],
      limit: null,
      offset: null,
    };
    const rel = { kind: 'relation', name: 'r', query: plain };
    // ORDER without BY, LIMIT and OFFSET without a number: the parent's next fields.
    expect(selectionOf('t { r { id } order limit offset count }')).toEqual([
      rel,
      field('order'),
      field('limit'),
      field('offset'),
      field('count'),
    ]);
    expect(selectionOf('t { r { id } after name }')).toEqual([rel, field('after'), field('name')]);
    // A comma ends the relation: after it, even `order by` is two fields.
    expect(selectionOf('t { r { id } LIMIT 2, order by }')).toEqual([
      { ...rel, query: { ...plain, limit: 2 } },
      field('order'),
      field('by'),
    ]);
  });

  it('gives clauses after a nested selection to that relation when they can start', () => {
    expect(selectionOf('t { r { id } order BY order limit 3 offset 4 limit }')).toEqual([
      {
        kind: 'relation',
        name: 'r',
        query: {
          filter: null,
          selection: [field('id')],
          orderBy: [{ field: path('order'), direction: 'ASC' }],
          limit: 3,
          offset: 4,
        },
      },
      field('limit'),
    ]);
  });

  it('reads a comma after a nested sort key as the next sort key', () => {
    expect(selectionOf('t { r { id } ORDER BY a, b DESC c }')).toEqual([
      {
        kind: 'relation',
        name: 'r',
        query: {
          filter: null,
          selection: [field('id')],
          orderBy: [
            { field: path('a'), direction: 'ASC' },
            { field: path('b'), direction: 'DESC' },
          ],
          limit: null,
          offset: null,
        },
      },
      field('c'),
    ]);
  });
});

describe('parseQuery: filters', () => {
  it('parses every comparison operator, <> as !=', () => {
    const operators = [
      ['=', '='],
      ['!=', '!='],
      ['<>', '!='],
      ['<', '<'],
      ['<=', '<='],
      ['>', '>'],
      ['>=', '>='],
    ];
    for (const [written, operator] of operators) {
      expect(filterOf(`t (a ${written} 1) { id }`)).toEqual(compare('a', operator!, num('1')));
    }
  });

  it('parses every literal', () => {
    const literals: [string, unknown][] = [
      ["'text'", str('text')],
      ["'it''s'", str("it's")],
      ["''", str('')],
      ["'two\nlines'", str('two\nlines')],
      ['0', num('0')],
      ['-12', num('-12')],
      ['3.25', num('3.25')],
      ['-0.5e-3', num('-0.5e-3')],
      ['1E+10', num('1E+10')],
      ['6e2', num('6e2')],
      [
        '123456789012345678901234567890.000000000000000001',
        num('123456789012345678901234567890.000000000000000001'),
      ],
      ['true', { kind: 'boolean', value: true }],
      ['FALSE', { kind: 'boolean', value: false }],
      ['True', { kind: 'boolean', value: true }],
      ['null', { kind: 'null' }],
      ['NULL', { kind: 'null' }],
    ];
    for (const [written, value] of literals) {
      expect(filterOf(`t (a = ${written}) { id }`)).toEqual(compare('a', '=', value));
    }
  });

  it('gives literals their spans', () => {
    const filter = parseQuery("t (a IN ('x''y', -1.5, true, null)) { id }").filter;
    expect(filter).toMatchObject({
      kind: 'in',
      values: [
        { kind: 'string', value: "x'y", span: { start: 9, end: 15 } },
        { kind: 'number', text: '-1.5', span: { start: 17, end: 21 } },
        { kind: 'boolean', value: true, span: { start: 23, end: 27 } },
        { kind: 'null', span: { start: 29, end: 33 } },
      ] satisfies Literal[],
      span: { start: 3, end: 34 },
    });
  });

  it('keeps Unicode in strings intact', () => {
    expect(filterOf("t (name = 'Zoë 😀 日本') { id }")).toEqual(
      compare('name', '=', str('Zoë 😀 日本')),
    );
  });

  it('parses LIKE and ILIKE', () => {
    expect(filterOf("t (name LIKE 'a%' OR name ilike '%B') { id }")).toEqual({
      kind: 'or',
      operands: [
        { kind: 'like', caseInsensitive: false, field: path('name'), pattern: 'a%' },
        { kind: 'like', caseInsensitive: true, field: path('name'), pattern: '%B' },
      ],
    });
  });

  it('parses IN with one or more values', () => {
    expect(filterOf('t (a IN (1)) { id }')).toEqual({
      kind: 'in',
      field: path('a'),
      values: [num('1')],
    });
    expect(filterOf("t (a in ('x', 'y', NULL)) { id }")).toEqual({
      kind: 'in',
      field: path('a'),
      values: [str('x'), str('y'), { kind: 'null' }],
    });
  });

  it('parses IS NULL and IS NOT NULL', () => {
    const filter = parseQuery('t (a IS NULL AND b IS NOT NULL) { id }').filter;
    expect(filter).toEqual({
      kind: 'and',
      operands: [
        {
          kind: 'isNull',
          negated: false,
          field: { kind: 'path', segments: ['a'], span: { start: 3, end: 4 } },
          span: { start: 3, end: 12 },
        },
        {
          kind: 'isNull',
          negated: true,
          field: { kind: 'path', segments: ['b'], span: { start: 17, end: 18 } },
          span: { start: 17, end: 30 },
        },
      ],
      span: { start: 3, end: 30 },
    } satisfies Condition);
  });

  it('accepts = NULL, which the engine evaluates with SQL semantics', () => {
    expect(filterOf('t (a = NULL) { id }')).toEqual(compare('a', '=', { kind: 'null' }));
  });

  it('parses BETWEEN, whose AND is its own', () => {
    expect(filterOf("t (a BETWEEN 1 AND 5 AND b BETWEEN 'x' and 'y') { id }")).toEqual({
      kind: 'and',
      operands: [
        { kind: 'between', field: path('a'), low: num('1'), high: num('5') },
        { kind: 'between', field: path('b'), low: str('x'), high: str('y') },
      ],
    });
  });

  it('binds AND tighter than OR', () => {
    expect(filterOf('t (a = 1 OR b = 2 AND c = 3) { id }')).toEqual({
      kind: 'or',
      operands: [a1, { kind: 'and', operands: [b2, c3] }],
    });
    expect(filterOf('t (a = 1 AND b = 2 OR c = 3) { id }')).toEqual({
      kind: 'or',
      operands: [{ kind: 'and', operands: [a1, b2] }, c3],
    });
  });

  it('groups with parentheses', () => {
    expect(filterOf('t ((a = 1 OR b = 2) AND c = 3) { id }')).toEqual({
      kind: 'and',
      operands: [{ kind: 'or', operands: [a1, b2] }, c3],
    });
    expect(filterOf('t (((a = 1))) { id }')).toEqual(a1);
  });

  it('flattens nested ANDs and ORs into one node', () => {
    const and3 = { kind: 'and', operands: [a1, b2, c3] };
    expect(filterOf('t (a = 1 AND (b = 2 AND c = 3)) { id }')).toEqual(and3);
    expect(filterOf('t ((a = 1 AND b = 2) AND c = 3) { id }')).toEqual(and3);
    expect(filterOf('t (a = 1 OR (b = 2 OR c = 3)) { id }')).toEqual({
      kind: 'or',
      operands: [a1, b2, c3],
    });
    // Different kinds stay nested.
    expect(filterOf('t (a = 1 AND (b = 2 OR c = 3)) { id }')).toEqual({
      kind: 'and',
      operands: [a1, { kind: 'or', operands: [b2, c3] }],
    });
  });

  it('spans a flattened node over its whole source, parentheses included', () => {
    const filter = parseQuery('t ((a = 1 AND b = 2) AND c = 3) { id }').filter!;
    expect(filter.span).toEqual({ start: 3, end: 30 });
    expect(filter.kind === 'and' && filter.operands.map((operand) => operand.span)).toEqual([
      { start: 4, end: 9 },
      { start: 14, end: 19 },
      { start: 25, end: 30 },
    ]);
  });

  it('parses paths, quoted segments included', () => {
    const filter = parseQuery('t (customer."home country".code = \'FR\') { id }').filter;
    expect(filter).toMatchObject({
      field: {
        kind: 'path',
        segments: ['customer', 'home country', 'code'],
        span: { start: 3, end: 31 },
      },
    });
  });

  it('reads keywords as field names where a field is expected', () => {
    expect(filterOf('t (and = 1 AND or = 2 OR order.limit IS NULL) { id }')).toEqual({
      kind: 'or',
      operands: [
        {
          kind: 'and',
          operands: [compare('and', '=', num('1')), compare('or', '=', num('2'))],
        },
        { kind: 'isNull', negated: false, field: path('order', 'limit') },
      ],
    });
  });

  it('reads a quoted true or null as a field, not a literal', () => {
    expect(filterOf('t ("null" = true) { id }')).toEqual(
      compare('null', '=', { kind: 'boolean', value: true }),
    );
  });
});

describe('parseQuery: clauses', () => {
  it('parses ORDER BY with several keys, paths and directions', () => {
    expect(shape(parseQuery('t { id } ORDER BY a, b.c DESC, d ASC, order').orderBy)).toEqual([
      { field: path('a'), direction: 'ASC' },
      { field: path('b', 'c'), direction: 'DESC' },
      { field: path('d'), direction: 'ASC' },
      { field: path('order'), direction: 'ASC' },
    ]);
  });

  it('parses LIMIT and OFFSET', () => {
    const query = parseQuery('t { id } LIMIT 0 OFFSET 007');
    expect([query.limit, query.offset]).toEqual([0, 7]);
    expect(parseQuery('t { id } OFFSET 5').offset).toBe(5);
    expect(parseQuery(`t { id } LIMIT ${Number.MAX_SAFE_INTEGER}`).limit).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });

  it('parses AFTER, with an empty cursor for the first page', () => {
    expect(parseQuery("t { id } AFTER ''").after).toBe('');
    expect(parseQuery("t { id } LIMIT 2 AFTER 'eyJpZCI6MX0='").after).toBe('eyJpZCI6MX0=');
  });
});

describe('parseQuery: error messages', () => {
  it('formats the message with the location and a caret excerpt', () => {
    const error = parseError('users { id name');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('QueryParseError');
    expect(error.code).toBe('parse_error');
    expect(error.position).toEqual({ offset: 15, line: 1, column: 16 });
    expect(error.message).toBe(
      [
        'Syntax error at line 1, column 16: Expected "}", found end of query.',
        '  users { id name',
        '                 ^',
      ].join('\n'),
    );
  });

  it('points at the end of the last token, not at trailing blank lines or comments', () => {
    const error = parseError('users {\n  id\n  name   \n\n-- more to come\n');
    expect(error.position).toEqual({ offset: 19, line: 3, column: 7 });
    expect(error.message).toBe(
      [
        'Syntax error at line 3, column 7: Expected "}", found end of query.',
        '    name   ',
        '        ^',
      ].join('\n'),
    );
  });

  it('counts lines and columns on later lines, CRLF included', () => {
    expect(errorAt('users {\r\n  id\r\n  5 }')).toEqual([
      'Expected a field, "*", "..." or "}", found number 5.',
      3,
      3,
    ]);
  });

  it('counts columns in code points after surrogate pairs', () => {
    const error = parseError("t (a = '😀😀' AND b = ) { id }");
    // The two emoji take four UTF-16 units, but two columns.
    expect(error.position).toEqual({ offset: 22, line: 1, column: 21 });
    expect(error.message).toBe(
      [
        `Syntax error at line 1, column 21: Expected a value (a 'string', a number, true, false or NULL), found ")".`,
        "  t (a = '😀😀' AND b = ) { id }",
        `  ${' '.repeat(20)}^`,
      ].join('\n'),
    );
  });

  it('reports an empty query', () => {
    expect(errorAt('')).toEqual(['Expected a table name, found end of query.', 1, 1]);
    expect(errorAt('  -- nothing\n')).toEqual(['Expected a table name, found end of query.', 1, 1]);
  });

  it('describes each kind of unexpected token', () => {
    expect(errorAt("'users' { id }")).toEqual([
      "Expected a table name, found string 'users'.",
      1,
      1,
    ]);
    expect(errorAt('12 { id }')).toEqual(['Expected a table name, found number 12.', 1, 1]);
    expect(errorAt('{ id }')).toEqual(['Expected a table name, found "{".', 1, 1]);
    expect(errorAt('>= { id }')).toEqual(['Expected a table name, found ">=".', 1, 1]);
    expect(errorAt('users id')).toEqual([
      'Expected "(" or "{" after the table name, found name "id".',
      1,
      7,
    ]);
    expect(errorAt('users "a ""b"""')).toEqual([
      'Expected "(" or "{" after the table name, found name "a ""b""".',
      1,
      7,
    ]);
  });

  it('shortens a long token in the description to its first line and 40 characters', () => {
    const long = `'${'x'.repeat(50)}'`;
    expect(errorAt(`${long} { id }`)[0]).toBe(
      `Expected a table name, found string '${'x'.repeat(39)}....`,
    );
    expect(errorAt("'a\nb' { id }")[0]).toBe("Expected a table name, found string 'a....");
  });

  it('reports a missing selection', () => {
    expect(errorAt('users')).toEqual([
      'Expected "(" or "{" after the table name, found end of query.',
      1,
      6,
    ]);
    expect(errorAt('users (a = 1) id')).toEqual(['Expected "{", found name "id".', 1, 15]);
    expect(errorAt('users @lenient { id }')).toEqual([
      'Pragmas such as @lenient go before the table name.',
      1,
      7,
    ]);
  });

  it('reports an empty selection', () => {
    expect(errorAt('users { }')).toEqual([
      'Empty selection: list at least one field between "{" and "}".',
      1,
      9,
    ]);
    expect(errorAt('users { orders {} }')).toEqual([
      'Empty selection: list at least one field between "{" and "}".',
      1,
      17,
    ]);
  });

  it('reports misplaced commas and tokens in a selection', () => {
    expect(errorAt('users { id, }')).toEqual(['Expected a field after ",", found "}".', 1, 13]);
    expect(errorAt('users { id,, name }')).toEqual([
      'Expected a field after ",", found ",".',
      1,
      12,
    ]);
    expect(errorAt('users { , id }')).toEqual([
      'Expected a field, "*", "..." or "}", found ",".',
      1,
      9,
    ]);
    expect(errorAt('users { id . name }')).toEqual([
      'Expected a field, "*", "..." or "}", found ".".',
      1,
      12,
    ]);
    expect(errorAt('users { id } }')).toEqual([
      'Expected HAVING, ORDER BY, LIMIT, OFFSET, AFTER or end of query, found "}".',
      1,
      14,
    ]);
  });

  it('reports bad aggregates', () => {
    expect(errorAt('t { SUM(*) }')).toEqual([
      'Expected a field name in SUM(...), found "*". Only COUNT accepts "*".',
      1,
      9,
    ]);
    expect(errorAt('t { avg() }')).toEqual(['Expected a field name in AVG(...), found ")".', 1, 9]);
    expect(errorAt('t { count(a.b) }')).toEqual([
      'Expected ")" to close COUNT(...), found ".".',
      1,
      12,
    ]);
    expect(errorAt('t { count(id }')).toEqual([
      'Expected ")" to close COUNT(...), found "}".',
      1,
      14,
    ]);
  });

  it('reports a relation filter without a selection', () => {
    expect(errorAt('t { orders (a = 1) id }')).toEqual([
      'Expected "{" after the filter of relation orders, found name "id".',
      1,
      20,
    ]);
  });

  it('reports an unterminated string or quoted name where it starts', () => {
    expect(errorAt("users (name = 'abc) { id }")).toEqual([
      `Unterminated string: missing the closing "'".`,
      1,
      15,
    ]);
    expect(errorAt("users (name = 'it''s) { id }")).toEqual([
      `Unterminated string: missing the closing "'".`,
      1,
      15,
    ]);
    expect(errorAt('users { "id }')).toEqual([
      `Unterminated quoted name: missing the closing '"'.`,
      1,
      9,
    ]);
    expect(errorAt('users { "" }')).toEqual(['A quoted name cannot be empty.', 1, 9]);
  });

  it('reports bad characters', () => {
    expect(errorAt('users { id # }')).toEqual(['Unexpected character "#".', 1, 12]);
    expect(errorAt('users (a ! 1) { id }')).toEqual([
      'Unexpected character "!". Did you mean "!="?',
      1,
      10,
    ]);
    expect(errorAt('users { id \u0007 }')).toEqual(['Unexpected character U+0007.', 1, 12]);
    expect(errorAt('users {\u00a0id }')).toEqual(['Unexpected character U+00A0.', 1, 8]);
    expect(errorAt('users { 😀 }')).toEqual(['Unexpected character "😀".', 1, 9]);
    expect(errorAt('users (a = - 1) { id }')).toEqual(['Unexpected character "-".', 1, 12]);
  });

  it('reports malformed numbers', () => {
    expect(errorAt('t (a = 12abc) { id }')).toEqual([
      'Invalid number: unexpected "a" after 12.',
      1,
      10,
    ]);
    expect(errorAt('t (a = 1.2.3) { id }')).toEqual([
      'Invalid number: unexpected "." after 1.2.',
      1,
      11,
    ]);
    expect(errorAt('t (a = 1.) { id }')).toEqual([
      'Invalid number: expected a digit after "1.", found ")".',
      1,
      10,
    ]);
    expect(errorAt('t (a = 1e+ 5) { id }')).toEqual([
      'Invalid number: expected a digit after "1e+", found a space.',
      1,
      11,
    ]);
    expect(errorAt('t (a = -3e')).toEqual([
      'Invalid number: expected a digit after "-3e", found end of query.',
      1,
      11,
    ]);
  });

  it('reports unknown pragmas, with a suggestion when one is close', () => {
    expect(errorAt('@lenent users { id }')).toEqual([
      'Unknown pragma @lenent. Did you mean @lenient?',
      1,
      1,
    ]);
    expect(errorAt('@LENEINT users { id }')[0]).toBe(
      'Unknown pragma @LENEINT. Did you mean @lenient?',
    );
    expect(errorAt('@lenient @strict users { id }')).toEqual(['Unknown pragma @strict.', 1, 10]);
    // Whitespace separates tokens, so this is the pragma @users.
    expect(errorAt('@ users { id }')).toEqual(['Unknown pragma @users.', 1, 1]);
    expect(errorAt('@{ id }')).toEqual(['Expected a pragma name after "@", found "{".', 1, 2]);
  });

  it('reports bad filters', () => {
    const cases: [string, string, number][] = [
      [
        't () { id }',
        'Empty filter: write a condition between "(" and ")", or leave the parentheses out.',
        4,
      ],
      ["t ('a' = 1) { id }", "Expected a condition, found string 'a'.", 4],
      ['t (a = 1 AND) { id }', 'Expected a condition, found ")".', 13],
      [
        't (a NOT IN (1)) { id }',
        'Expected an operator after a (=, !=, <, <=, >, >=, LIKE, ILIKE, IN, IS, BETWEEN, CONTAINS, CONTAINED BY or OVERLAPS), found name "NOT".',
        6,
      ],
      [
        't (a.b) { id }',
        'Expected an operator after a.b (=, !=, <, <=, >, >=, LIKE, ILIKE, IN, IS, BETWEEN, CONTAINS, CONTAINED BY or OVERLAPS), found ")".',
        7,
      ],
      ['t (a. = 1) { id }', 'Expected a field name after ".", found "=".', 7],
      [
        't (a = b) { id }',
        'Expected a value (a \'string\', a number, true, false or NULL), found name "b".',
        8,
      ],
      [
        't (a = "it\'s") { id }',
        "Expected a value (a 'string', a number, true, false or NULL), found name \"it's\". Strings take single quotes: 'it''s'.",
        8,
      ],
      ['t (a LIKE 5) { id }', 'Expected a string pattern after LIKE, found number 5.', 11],
      ['t (a ILIKE x) { id }', 'Expected a string pattern after ILIKE, found name "x".', 12],
      ['t (a IN 1) { id }', 'Expected "(" after IN, found number 1.', 9],
      ['t (a IN ()) { id }', 'Expected at least one value in the IN list, found ")".', 10],
      ['t (a IN (1 2)) { id }', 'Expected "," or ")" in the IN list, found number 2.', 12],
      [
        't (a IN (1,)) { id }',
        'Expected a value (a \'string\', a number, true, false or NULL), found ")".',
        12,
      ],
      ['t (a IS 1) { id }', 'Expected NULL or NOT NULL after IS, found number 1.', 9],
      ['t (a IS NOT "null") { id }', 'Expected NULL after IS NOT, found name "null".', 13],
      [
        't (a BETWEEN 1 OR 2) { id }',
        'Expected AND between the bounds of BETWEEN, found name "OR".',
        16,
      ],
      ['t (a = 1 b = 2) { id }', 'Expected AND, OR or ")", found name "b".', 10],
      ['t ((a = 1) { id }', 'Expected AND, OR or ")", found "{".', 12],
      ['t (a = 1', 'Expected AND, OR or ")", found end of query.', 9],
    ];
    for (const [source, detail, column] of cases) {
      expect(errorAt(source)).toEqual([detail, 1, column]);
    }
  });

  it('reports clauses out of order or repeated', () => {
    const cases: [string, string, number][] = [
      ['t { id } LIMIT 1 ORDER BY id', 'ORDER BY must come before LIMIT.', 18],
      ['t { id } OFFSET 1 LIMIT 1', 'LIMIT must come before OFFSET.', 19],
      ["t { id } AFTER 'x' OFFSET 1", 'OFFSET must come before AFTER.', 20],
      ['t { id } LIMIT 1 LIMIT 2', 'Duplicate LIMIT clause.', 18],
      ['t { id } ORDER BY a ORDER BY b', 'Duplicate ORDER BY clause.', 21],
      ["t { id } AFTER 'a' AFTER 'b'", 'Duplicate AFTER clause.', 20],
      ['t { r { id } LIMIT 1 OFFSET 2 LIMIT 3 }', 'LIMIT must come before OFFSET.', 31],
      ['t { r { id } LIMIT 1 ORDER BY x }', 'ORDER BY must come before LIMIT.', 22],
      ['t { id } ORDER BY id HAVING count > 1', 'HAVING must come before ORDER BY.', 22],
      ['t { id } HAVING a = 1 HAVING b = 1', 'Duplicate HAVING clause.', 23],
    ];
    for (const [source, detail, column] of cases) {
      expect(errorAt(source)).toEqual([detail, 1, column]);
    }
  });

  it('reports what may follow the top-level selection', () => {
    expect(errorAt('t { id } foo')).toEqual([
      'Expected HAVING, ORDER BY, LIMIT, OFFSET, AFTER or end of query, found name "foo".',
      1,
      10,
    ]);
    expect(errorAt('t { id } ORDER BY a b')).toEqual([
      'Expected ",", LIMIT, OFFSET, AFTER or end of query, found name "b".',
      1,
      21,
    ]);
    expect(errorAt('t { id } LIMIT 1, 2')).toEqual([
      'Expected OFFSET, AFTER or end of query, found ",".',
      1,
      17,
    ]);
    expect(errorAt("t { id } AFTER 'x' 'y'")).toEqual([
      "Expected end of query, found string 'y'.",
      1,
      20,
    ]);
  });

  it('reports a bad ORDER BY', () => {
    expect(errorAt('t { id } ORDER id')).toEqual([
      'Expected BY after ORDER, found name "id".',
      1,
      16,
    ]);
    expect(errorAt('t { id } ORDER BY')).toEqual([
      'Expected a field to sort by, found end of query.',
      1,
      18,
    ]);
    expect(errorAt('t { id } ORDER BY a,')).toEqual([
      'Expected a field to sort by, found end of query.',
      1,
      21,
    ]);
    expect(errorAt("t { id } ORDER BY 'a'")).toEqual([
      "Expected a field to sort by, found string 'a'.",
      1,
      19,
    ]);
  });

  it('reports a bad LIMIT or OFFSET', () => {
    const cases: [string, string, number][] = [
      ['t { id } LIMIT -1', 'Expected a non-negative integer after LIMIT, found "-1".', 16],
      ['t { id } LIMIT 1.5', 'Expected a non-negative integer after LIMIT, found "1.5".', 16],
      ['t { id } LIMIT 1e3', 'Expected a non-negative integer after LIMIT, found "1e3".', 16],
      ["t { id } LIMIT '5'", "Expected a non-negative integer after LIMIT, found string '5'.", 16],
      ['t { id } LIMIT', 'Expected a non-negative integer after LIMIT, found end of query.', 15],
      ['t { id } OFFSET -2', 'Expected a non-negative integer after OFFSET, found "-2".', 17],
      ['t { id } LIMIT 9007199254740992', 'LIMIT 9007199254740992 is too large.', 16],
      // In a relation, LIMIT followed by any number is the clause, so its errors show too.
      ['t { r { id } LIMIT -1 }', 'Expected a non-negative integer after LIMIT, found "-1".', 20],
    ];
    for (const [source, detail, column] of cases) {
      expect(errorAt(source)).toEqual([detail, 1, column]);
    }
  });

  it('reports a bad or nested AFTER', () => {
    expect(errorAt('t { id } AFTER 5')).toEqual([
      'Expected a cursor string after AFTER, found number 5.',
      1,
      16,
    ]);
    expect(errorAt("t { r { id } AFTER 'x' }")).toEqual([
      'AFTER is only allowed at the top level: a relation cannot be paged by cursor.',
      1,
      14,
    ]);
  });

  it('shows a window of a very long line around the error', () => {
    const source = `t (a = 1 AND ${'b = 2 AND '.repeat(30)}c = ) { ${'f '.repeat(50)}}`;
    const error = parseError(source);
    const [, excerpt, caret] = error.message.split('\n');
    const offset = source.indexOf(') {');
    expect(error.position.column).toBe(offset + 1);
    expect(excerpt).toBe(`  ...${source.slice(offset - 60, offset + 40)}...`);
    expect(caret).toBe(`  ${' '.repeat(63)}^`);
    // Near the end of the line, the window is the line's last 100 characters.
    const [, tail, tailCaret] = parseError(`t { ${'f '.repeat(100)}# }`).message.split('\n');
    expect(tail).toBe(`  ... ${'f '.repeat(48)}# }`);
    expect(tailCaret).toBe(`  ${' '.repeat(3 + 97)}^`);
  });
});

describe('parseQuery: aggregates out of place', () => {
  it('refuses an aggregate in a filter, pointing to HAVING', () => {
    const [detail, line, column] = errorAt('t (COUNT(*) > 1) { g COUNT(*) }');
    expect(detail).toContain('COUNT(...) cannot be used in a filter');
    expect(detail).toContain('HAVING');
    expect([line, column]).toEqual([1, 4]);
  });

  it('refuses DISTINCT outside COUNT, and a HAVING without a condition', () => {
    expect(errorAt('t { MAX(DISTINCT x) }')[0]).toContain('DISTINCT is allowed in COUNT(...) only');
    expect(errorAt('t { COUNT(*) } HAVING')).toEqual([
      'Expected a condition, found end of query.',
      1,
      22,
    ]);
    expect(errorAt('t { COUNT(*) } HAVING count > 1 x')[0]).toBe(
      'Expected AND, OR, ORDER BY, LIMIT, OFFSET, AFTER or end of query, found name "x".',
    );
  });
});

describe('parseQuery: array tests', () => {
  it('parses CONTAINS, CONTAINED BY, OVERLAPS and CARDINALITY(...)', () => {
    expect(
      filterOf(
        "t (tags CONTAINS ('a', 'b') AND tags CONTAINED BY (1) OR CARDINALITY(r.tags) > 2) { id }",
      ),
    ).toEqual({
      kind: 'or',
      operands: [
        {
          kind: 'and',
          operands: [
            {
              kind: 'array',
              operator: 'CONTAINS',
              field: path('tags'),
              values: [str('a'), str('b')],
            },
            { kind: 'array', operator: 'CONTAINED BY', field: path('tags'), values: [num('1')] },
          ],
        },
        {
          kind: 'compare',
          operator: '>',
          field: { ...path('r', 'tags'), cardinality: true },
          value: num('2'),
        },
      ],
    });
    expect(filterOf("t (tags OVERLAPS ('x')) { id }")).toMatchObject({ operator: 'OVERLAPS' });
  });

  it('reads a field called cardinality or contains as a field', () => {
    expect(filterOf('t (cardinality = 1 AND contains = 2) { id }')).toEqual({
      kind: 'and',
      operands: [compare('cardinality', '=', num('1')), compare('contains', '=', num('2'))],
    });
  });

  it('refuses an empty list and CONTAINED without BY', () => {
    expect(errorAt('t (tags CONTAINS ()) { id }')[0]).toBe(
      'Expected at least one value in the CONTAINS list, found ")".',
    );
    expect(errorAt("t (tags CONTAINED ('a')) { id }")[0]).toBe(
      'Expected BY after CONTAINED, found "(".',
    );
  });
});

describe('parseQuery: JSON paths', () => {
  it('reads steps after a field, in filters, selections and ORDER BY', () => {
    const query = parseQuery("t (d->'a'->0 = 1) { id d->'b' } ORDER BY r.d->'c' DESC");
    expect(shape(query.filter)).toEqual({
      kind: 'compare',
      operator: '=',
      field: { kind: 'path', segments: ['d'], json: ['a', 0] },
      value: num('1'),
    });
    expect(shape(query.selection)).toEqual([
      field('id'),
      { kind: 'field', name: 'd', json: ['b'] },
    ]);
    expect(shape(query.orderBy[0]?.field)).toEqual({
      kind: 'path',
      segments: ['r', 'd'],
      json: ['c'],
    });
  });

  it('refuses a step that is no key or index, and a path deeper than 32 steps', () => {
    expect(errorAt('t (d->-1 = 1) { id }')[0]).toBe(
      'Expected a key (\'name\') or an array index (0, 1, …) after "->", found number -1.',
    );
    expect(errorAt('t (d->x = 1) { id }')[0]).toContain('after "->", found name "x"');
    const deep = Array.from({ length: 33 }, () => "->'k'").join('');
    expect(errorAt(`t (d${deep} = 1) { id }`)[0]).toContain('JSON path too deep');
  });
});
