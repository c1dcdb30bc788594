import type { TestInstance } from '../instance-helpers.ts';
import { servedQuery } from './served-query.ts';

/**
 * Every value of `column` that `AFTER` paging over `table` returns, page by page from
 * `AFTER ''` until an answer has no `next_cursor`, in the order served; and the page count.
 */
export async function walkAfter(
  served: TestInstance,
  table: string,
  column: string,
  pageSize: number,
): Promise<{ values: string[]; pages: number }> {
  const values: string[] = [];
  let cursor: string | undefined = '';
  let pages = 0;
  while (cursor !== undefined) {
    const escaped: string = cursor.replaceAll("'", "''");
    const answer = await servedQuery(
      served,
      `${table} { ${column} } LIMIT ${pageSize} AFTER '${escaped}'`,
      new Set(),
    );
    pages += 1;
    for (const row of answer.rows) {
      values.push(String((row as Record<string, unknown>)[column]));
    }
    cursor = answer.nextCursor;
    if (pages > 10_000) throw new Error(`AFTER paging over ${table} did not end`);
  }
  return { values, pages };
}
