import type { TestInstance } from '../instance-helpers.ts';
import { MARKER_CATEGORY } from './sakila-writes.ts';

/**
 * Milliseconds from `committedAt` (a `performance.now()` just after the marker's commit) until
 * the instance serves the marker category; fails after `timeoutMs`.
 */
export async function millisUntilMarkerServed(
  served: TestInstance,
  committedAt: number,
  timeoutMs = 20_000,
): Promise<number> {
  const query = `category (name = '${MARKER_CATEGORY}') { category_id }`;
  for (;;) {
    const response = await served.query(query);
    const body = (await response.json()) as { data?: unknown[] };
    if (response.status === 200 && body.data?.length === 1) {
      return performance.now() - committedAt;
    }
    if (performance.now() - committedAt > timeoutMs) {
      throw new Error(`the marker written last was not served within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
