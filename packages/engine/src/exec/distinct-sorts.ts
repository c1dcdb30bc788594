import type { SortItem } from '@replix/query';

/**
 * The sort keys without repeats: only the first occurrence of a path is kept, since a later one
 * can never break a tie the first left (`ORDER BY n, n DESC` sorts as `ORDER BY n`). A path
 * names the same column or aggregate wherever it appears in one selection, so comparing the
 * written segments is comparing sort sources.
 */
export function distinctSorts(items: readonly SortItem[]): SortItem[] {
  const seen = new Set<string>();
  const distinct: SortItem[] = [];
  for (const item of items) {
    // JSON keeps segments apart even when a quoted name contains a dot; a JSON path's steps
    // name another value of the same field.
    const key = JSON.stringify([item.field.segments, item.field.json ?? []]);
    if (seen.has(key)) continue;
    seen.add(key);
    distinct.push(item);
  }
  return distinct;
}
