import { parseQuery } from '@replix/query';
import { describe, expect, it } from 'vitest';
import { distinctSorts } from '../src/exec/distinct-sorts.ts';

/** The sort keys `distinctSorts` keeps for `ORDER BY <orderBy>`, as `path direction`. */
function kept(orderBy: string): string[] {
  return distinctSorts(parseQuery(`t { id } ORDER BY ${orderBy}`).orderBy).map(
    (sort) => `${JSON.stringify(sort.field.segments)} ${sort.direction}`,
  );
}

describe('distinctSorts', () => {
  it('keeps the first occurrence of each path, with its direction', () => {
    expect(kept('n, m DESC, n DESC, m, n')).toEqual(['["n"] ASC', '["m"] DESC']);
  });

  it('tells paths apart by their segments, not their text', () => {
    // A quoted name may contain a dot: "a.b" is one field, a.b a relation and its field.
    expect(kept('"a.b", a.b, a."b", "a".b DESC')).toEqual(['["a.b"] ASC', '["a","b"] ASC']);
  });

  it('treats names as case-sensitive, as the schema does', () => {
    expect(kept('n, N')).toEqual(['["n"] ASC', '["N"] ASC']);
  });

  it('keeps a list without repeats as it is', () => {
    expect(kept('c, b DESC, a')).toEqual(['["c"] ASC', '["b"] DESC', '["a"] ASC']);
  });
});
