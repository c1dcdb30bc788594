import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PARSE_LIMITS,
  type ParseOptions,
  parseQuery,
  QueryParseError,
  QueryTooComplexError,
} from '../src/index.ts';

function tooComplex(source: string, options?: ParseOptions): QueryTooComplexError {
  try {
    parseQuery(source, options);
  } catch (error) {
    if (error instanceof QueryTooComplexError) return error;
    throw error;
  }
  throw new Error(`expected a QueryTooComplexError for: ${source.slice(0, 80)}`);
}

/** `t { r { r { … id } } }` with `depth` selections, the top-level one included. */
const selections = (depth: number) => `t { ${'r { '.repeat(depth - 1)}id${' }'.repeat(depth)}`;
/** `t ((( … a = 1 ))) { id }` with `depth` parentheses, the filter's own included. */
const parentheses = (depth: number) =>
  `t (${'('.repeat(depth - 1)}a = 1${')'.repeat(depth)} { id }`;
const orChain = (terms: number) =>
  `t (${Array.from({ length: terms }, (_, i) => `a = ${i}`).join(' OR ')}) { id }`;

describe('parse limits', () => {
  it('are 10,000 tokens, 32 nested selections, 64 nested parentheses, 256 conditions and 256 written ORDER BY keys by default', () => {
    expect(DEFAULT_PARSE_LIMITS).toEqual({
      maxTokens: 10_000,
      maxSelectionDepth: 32,
      maxFilterDepth: 64,
      maxConditions: 256,
      maxSortKeys: 256,
    });
    expect(Object.isFrozen(DEFAULT_PARSE_LIMITS)).toBe(true);
  });

  it('accepts 10,000 tokens and refuses the next one where it starts', () => {
    const fields = (count: number) =>
      `t { ${Array.from({ length: count }, (_, i) => `f${i}`).join(' ')} }`;
    // t, {, } and the fields: exactly 10,000 tokens parse.
    expect(parseQuery(fields(9_997)).selection).toHaveLength(9_997);
    const error = tooComplex(fields(9_998));
    expect(error.limit).toBe('maxTokens');
    expect(error.code).toBe('query_too_complex');
    expect(error.detail).toBe(
      'Query too long: more than 10000 tokens (limit: 10000 tokens per query). ' +
        'Select fewer fields, or use IN (...) instead of a chain of ORs.',
    );
    expect(error.position.offset).toBe(fields(9_998).length - 1);
  });

  it('takes a smaller token limit from the options', () => {
    expect(parseQuery('t { a b }', { maxTokens: 5 }).selection).toHaveLength(2);
    const error = tooComplex('t { a b c }', { maxTokens: 4 });
    expect(error.detail).toMatch(/^Query too long: more than 4 tokens \(limit: 4 tokens/);
    expect([error.position.line, error.position.column]).toEqual([1, 9]);
  });

  it('accepts 32 nested selections and refuses the 33rd at its "{"', () => {
    expect(parseQuery(selections(32)).selection).toHaveLength(1);
    const source = selections(33);
    const error = tooComplex(source);
    expect(error.limit).toBe('maxSelectionDepth');
    expect(error.detail).toBe(
      'Selections nested too deeply: more than 32 levels (limit: 32 nested selections). ' +
        'Select fewer levels of relations, and query deeper ones separately.',
    );
    expect(error.position.offset).toBe(source.lastIndexOf('{'));
  });

  it('accepts 64 nested parentheses in a filter and refuses the 65th at its "("', () => {
    expect(parseQuery(parentheses(64)).filter).toMatchObject({ kind: 'compare' });
    const source = parentheses(65);
    const error = tooComplex(source);
    expect(error.limit).toBe('maxFilterDepth');
    expect(error.detail).toBe(
      'Filter nested too deeply: more than 64 levels of parentheses (limit: 64). ' +
        'Leave out parentheses that only repeat a grouping: AND binds tighter than OR.',
    );
    expect(error.position.offset).toBe(source.lastIndexOf('('));
  });

  it('counts parentheses that are open at once, not all of them', () => {
    const groups = Array.from({ length: 100 }, (_, i) => `((a = ${i}))`).join(' OR ');
    expect(parseQuery(`t (${groups}) { id }`).filter).toMatchObject({ kind: 'or' });
    // The deepest selections may still have the deepest filters.
    const deepest = `t { ${'r { '.repeat(30)}r (${'('.repeat(63)}a = 1${')'.repeat(64)} { id }${' }'.repeat(31)}`;
    expect(parseQuery(deepest).selection).toHaveLength(1);
  });

  it('takes smaller depth limits from the options', () => {
    expect(parseQuery(selections(2), { maxSelectionDepth: 2 }).selection).toHaveLength(1);
    expect(tooComplex(selections(3), { maxSelectionDepth: 2 }).limit).toBe('maxSelectionDepth');
    expect(parseQuery(parentheses(3), { maxFilterDepth: 3 }).filter).not.toBeNull();
    expect(tooComplex(parentheses(4), { maxFilterDepth: 3 }).limit).toBe('maxFilterDepth');
  });

  it('rejects limits that are not positive integers', () => {
    expect(() => parseQuery('t { a }', { maxTokens: 0 })).toThrow(RangeError);
    expect(() => parseQuery('t { a }', { maxTokens: 1.5 })).toThrow(RangeError);
    expect(() => parseQuery('t { a }', { maxSelectionDepth: 0 })).toThrow(
      'maxSelectionDepth must be a positive integer, got 0.',
    );
    expect(() => parseQuery('t { a }', { maxFilterDepth: Number.NaN })).toThrow(RangeError);
  });

  it('reports like a compiler, and is not a syntax error', () => {
    const error = tooComplex('t { a b c }', { maxTokens: 4 });
    expect(error).not.toBeInstanceOf(QueryParseError);
    expect(error.name).toBe('QueryTooComplexError');
    expect(error.message.split('\n')).toEqual([
      `Query too complex at line 1, column 9: ${error.detail}`,
      '  t { a b c }',
      '          ^',
    ]);
  });
});

describe('hostile query text', () => {
  it('refuses 100 KB of "(" at the 65th, without recursing further', () => {
    const error = tooComplex(`t (${'('.repeat(100_000)}`);
    expect(error.limit).toBe('maxFilterDepth');
    // The filter's own "(" at column 3 is the first level.
    expect(error.position.column).toBe(3 + 64);
  });

  it('refuses 100 KB of nested selections at the 33rd', () => {
    expect(tooComplex(`t { ${'r { '.repeat(25_000)}`).limit).toBe('maxSelectionDepth');
  });

  it('refuses 5,000-deep nested selections', () => {
    expect(tooComplex(selections(5_000)).limit).toBe('maxSelectionDepth');
  });

  it('refuses an OR chain at its 257th condition, without reading the rest', () => {
    expect(parseQuery(orChain(256)).filter).toMatchObject({ kind: 'or' });
    const error = tooComplex(orChain(20_000));
    expect(error.limit).toBe('maxConditions');
    expect(error.message).toContain('more than 256 conditions');
  });

  it('parses 256 written ORDER BY keys, repeats included, and refuses the 257th', () => {
    const orderBy = (count: number) => `t { id } ORDER BY ${Array(count).fill('n').join(', ')}`;
    // Collapsing repeated keys is the engine's job: the tree keeps what was written.
    expect(parseQuery(orderBy(256)).orderBy).toHaveLength(256);
    const error = tooComplex(orderBy(4_000));
    expect(error.limit).toBe('maxSortKeys');
    expect(error.message).toContain('ORDER BY has more than 256 keys');
  });

  it('reads a string of 50,000 doubled quotes as 50,000 quotes', () => {
    const query = parseQuery(`t (a = '${"''".repeat(50_000)}') { id }`);
    expect(query.filter).toMatchObject({ kind: 'compare', value: { kind: 'string' } });
    const filter = query.filter as { value: { value: string } };
    expect(filter.value.value).toBe("'".repeat(50_000));
  });

  it('shows a 60 KB unknown pragma cut to 40 characters', () => {
    const error = (() => {
      try {
        parseQuery(`@${'l'.repeat(60_000)} t { id }`);
      } catch (caught) {
        return caught as QueryParseError;
      }
      throw new Error('expected a parse error');
    })();
    expect(error.detail).toBe(`Unknown pragma @${'l'.repeat(40)}....`);
  });

  it('keeps text around doubled quotes in strings and quoted names', () => {
    const query = parseQuery(`t ("a""b" = 'x''y''''z') { id }`);
    expect(query.filter).toMatchObject({
      field: { segments: ['a"b'] },
      value: { value: "x'y''z" },
    });
  });
});
