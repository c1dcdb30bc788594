import { mulberry32 } from '@replix/testkit/mulberry32';
import { describe, expect, it } from 'vitest';
import { type Literal, parseQuery, queryShape } from '../src/index.ts';
import { lexedShape } from '../src/query-shape.ts';

function key(text: string): string | undefined {
  return queryShape(text)?.key;
}

/** The tree with spans and source left out, and each literal by kind only. */
function skeleton(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(skeleton);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (
    (record.kind === 'string' || record.kind === 'number') &&
    'span' in record &&
    !('field' in record)
  ) {
    return { literal: record.kind };
  }
  const result: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(record)) {
    if (name !== 'span' && name !== 'source') result[name] = skeleton(field);
  }
  return result;
}

/** Every string or number literal of a parsed query, in text order. */
function literalsOf(value: unknown, into: Literal[] = []): Literal[] {
  if (Array.isArray(value)) for (const item of value) literalsOf(item, into);
  else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if ((record.kind === 'string' || record.kind === 'number') && 'span' in record) {
      into.push(record as unknown as Literal);
    }
    for (const field of Object.values(record)) literalsOf(field, into);
  }
  return into.sort((a, b) => a.span.start - b.span.start);
}

describe('queryShape', () => {
  it('lifts literal values out, in text order, as the parser reads them', () => {
    const text =
      "orders (id = 12 AND status IN ('paid', 'it''s') AND total BETWEEN -1.5 AND 2e3) { id }";
    const shape = queryShape(text);
    expect(shape?.key).toBe(
      'orders (id = ?n AND status IN (?s, ?s) AND total BETWEEN ?n AND ?n) { id }',
    );
    expect(shape?.literals).toEqual(literalsOf(parseQuery(text)));
    expect(shape?.literals.map((l) => (l.kind === 'string' ? l.value : l.text))).toEqual([
      '12',
      'paid',
      "it's",
      '-1.5',
      '2e3',
    ]);
  });

  it('counts the tokens of the text, comments and layout aside', () => {
    expect(queryShape('orders (id = 12) { id }')?.tokens).toBe(9);
    expect(queryShape('orders  (id=12){id} -- a comment')?.tokens).toBe(9);
  });

  it('is the same for queries that differ in values only', () => {
    expect(key('customers (id = 1) { id }')).toBe(key('customers (id = 22) { id }'));
    expect(key("t (a = 'x' OR b = 2) { a } -- c")).toBe(
      key("t (a = 'y''z' OR b = -3.25) { a } -- c"),
    );
    expect(key('t { a }')).toBe('t { a }');
    // Layout is kept: another layout is only another shape.
    expect(key('t (a = 1) { a }')).not.toBe(key('t(a=1){a}'));
  });

  it('keeps what the parser or the validator reads by value', () => {
    expect(key('t { a } LIMIT 1')).not.toBe(key('t { a } LIMIT 2'));
    expect(key('t { a } OFFSET 1')).not.toBe(key('t { a } OFFSET 2'));
    expect(key("t { a } AFTER ''")).not.toBe(key("t { a } AFTER 'x'"));
    expect(key("t (a LIKE 'x%') { a }")).not.toBe(key("t (a LIKE 'y%') { a }"));
    expect(key("t (a ilike 'x%') { a }")).not.toBe(key("t (a ilike 'y%') { a }"));
    expect(key('t { a r { b } limit 1 }')).not.toBe(key('t { a r { b } limit 2 }'));
    expect(key('t (a IN (1, 2)) { a }')).not.toBe(key('t (a IN (1, 2, 3)) { a }'));
    // A JSON path's steps name what is read; its compared value is a literal.
    expect(key("t (d->'a' = 1) { a }")).not.toBe(key("t (d->'b' = 1) { a }"));
    expect(key("t (d->'a'->0 = 1) { d->'x' }")).not.toBe(key("t (d->'a'->1 = 1) { d->'x' }"));
    expect(key("t (d->'a' = 1) { a }")).toBe(key("t (d->'a' = 2) { a }"));
  });

  it('tells literal kinds, keywords, quoted names and symbols apart', () => {
    expect(key("t (a = '1') { a }")).not.toBe(key('t (a = 1) { a }'));
    expect(key('t (a = true) { a }')).not.toBe(key('t (a = false) { a }'));
    expect(key('t (a = NULL) { a }')).not.toBe(key('t (a = 1) { a }'));
    expect(key('t (a != 1) { a }')).not.toBe(key('t (a <> 1) { a }'));
    expect(key('t { a }')).not.toBe(key('t { "a" }'));
    expect(key('t { "a b" }')).not.toBe(key('t { "a" "b" }'));
    expect(key('t { "a"" b" }')).not.toBe(key('t { "a" "b" }'));
    expect(key("t (a LIKE 'x y') { a }")).not.toBe(key("t (a LIKE 'x' y) { a }"));
  });

  it('is null for text that does not lex, so the parser reports the error', () => {
    expect(queryShape("t (a = 'open) { a }")).toBeNull();
    expect(queryShape('t (a = 12abc) { a }')).toBeNull();
    expect(queryShape('t { a } ! b')).toBeNull();
    expect(queryShape('t { a b c }', 3)).toBeNull();
  });

  it('gives queries of one shape the same tree but for their literals', () => {
    const pairs = [
      [
        "customers (id = 1 AND name = 'x') { id orders (total > 2) { id } LIMIT 3 }",
        "customers (id = 9 AND name = 'y''') { id orders (total > -2.5) { id } LIMIT 3 }",
      ],
      [
        "@lenient t (a.b IN ('1', '2') OR c BETWEEN 1 AND 2) { a COUNT(*) } ORDER BY a DESC LIMIT 5",
        "@lenient t (a.b IN ('3', '') OR c BETWEEN 7e1 AND 8) { a COUNT(*) } ORDER BY a DESC LIMIT 5",
      ],
      ['t (limit = 1) { limit }', 't (limit = 2) { limit }'],
    ];
    for (const [a, b] of pairs) {
      expect(key(a as string)).toBe(key(b as string));
      expect(skeleton(parseQuery(b as string))).toEqual(skeleton(parseQuery(a as string)));
      expect(queryShape(b as string)?.literals).toEqual(literalsOf(parseQuery(b as string)));
    }
  });
});

describe('the one-pass scan of a shape', () => {
  /** Pieces of query text, the lexer's edge cases among them. */
  const PIECES = [
    'fact',
    ' ',
    ' ',
    '\n',
    '\t',
    '\r',
    '\u000b',
    '\ufeff',
    '(',
    ')',
    '{',
    '}',
    ',',
    '*',
    '@',
    '.',
    '...',
    '=',
    '<',
    '<=',
    '<>',
    '>',
    '>=',
    '!=',
    '!',
    '-',
    '--',
    '->',
    "->'k'",
    '->0',
    '-- note\n',
    '"',
    '""',
    '"na""me"',
    '"x"',
    "'",
    "''",
    "'it''s'",
    "'abc'",
    "'é😀'",
    '12',
    '-3',
    '1.5',
    '1.',
    '2e10',
    '3E+2',
    '4e-',
    '5x',
    '6.7.8',
    'LIKE',
    'like',
    'ILike',
    'limit',
    'OFFSET',
    'after',
    'AFTERX',
    'lim',
    'id',
    '_a1',
    'é',
    '#',
    '?',
    'AND',
    'OR',
    'IN',
    'IS',
    'NULL',
    'true',
    'ORDER',
    'BY',
    'DESC',
  ];

  it('gives what the lexer gives, for any text made of its tokens and errors', () => {
    const random = mulberry32(27);
    for (let run = 0; run < 20_000; run++) {
      let text = '';
      const count = Math.floor(random() * 16);
      for (let i = 0; i < count; i++) text += PIECES[Math.floor(random() * PIECES.length)];
      const maxTokens = random() < 0.1 ? Math.floor(random() * 6) : undefined;
      expect(queryShape(text, maxTokens), text).toEqual(lexedShape(text, maxTokens));
    }
  });

  it('reads the texts clients send again and again', () => {
    const text =
      "fact (id = 123 AND note LIKE 'x%' AND day = '2024-01-02') { id qty amount } LIMIT 5";
    expect(queryShape(text)).toEqual(lexedShape(text));
    expect(queryShape(text)?.key).toBe(
      "fact (id = ?n AND note LIKE 'x%' AND day = ?s) { id qty amount } LIMIT 5",
    );
  });
});
