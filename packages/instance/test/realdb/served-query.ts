import type { TestInstance } from '../instance-helpers.ts';
import { type Canonical, canonicalServed, parseJsonKeepingDigits } from './canonical-value.ts';

/** A query's answer: its rows in canonical form, and the raw meta for paging. */
export interface ServedAnswer {
  readonly rows: Canonical[];
  readonly nextCursor: string | undefined;
}

/** Thrown for a non-200 answer: the status and the error envelope, for the test's message. */
export class ServedQueryError extends Error {
  constructor(query: string, status: number, body: string) {
    super(`query ${JSON.stringify(query)} answered ${status}: ${body.slice(0, 500)}`);
    this.name = 'ServedQueryError';
  }
}

/**
 * Runs `query` on the instance and returns its rows in canonical form (numbers as their exact
 * digits; strings under a key in `timestampKeys` as instants).
 */
export async function servedQuery(
  served: TestInstance,
  query: string,
  timestampKeys: ReadonlySet<string>,
): Promise<ServedAnswer> {
  const response = await served.query(query);
  const text = await response.text();
  if (response.status !== 200) throw new ServedQueryError(query, response.status, text);
  const body = parseJsonKeepingDigits(text) as {
    data: unknown[];
    meta: { pagination?: { next_cursor?: string } };
  };
  return {
    rows: body.data.map((row) => canonicalServed(row, timestampKeys)),
    nextCursor: body.meta.pagination?.next_cursor,
  };
}
