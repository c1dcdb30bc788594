import { type CompiledTable, canonicalToComparable } from '@replix/engine';

/**
 * What the change stream last said of a row in this tick: its image (an `undefined` value is
 * one the source did not send), null when it is gone, undefined when the stream cannot say (a
 * foreign-key action changed it, or a truncate came after).
 */
export type StreamImage = readonly unknown[] | null | undefined;

/** Reads rows by primary key with whether each satisfies the table's `where` (`flagWhere`). */
export type FlaggedRowFetcher = (
  table: CompiledTable,
  keys: readonly (readonly unknown[])[],
) => Promise<unknown[][]>;

export interface RecheckedRows {
  /** Rows that satisfy the `where`, in stored column order. */
  readonly served: unknown[][];
  /** Keys whose row is gone or does not satisfy it. */
  readonly unserved: (readonly unknown[])[];
  /** Keys read again because the source showed an older row than the stream. */
  readonly staleReads: number;
}

/** Waits before each further read of keys whose row the source showed older than the stream. */
const RETRY_DELAYS_MS = [5, 15, 40, 100, 250];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Re-reads rows of a filtered table by key and makes sure each read shows the row as the change
 * stream last did. A source can send a change before its transaction is visible to other
 * sessions: MariaDB sends the binlog before InnoDB commits (in a test, 6 of 37,000 reads right
 * after an update's event still showed the row before it). A read right after may then see the
 * row as it was and drop a row that has just entered the `where`. Such keys are read again
 * after a short wait, a few times; a row still read differently after that has changed again
 * since (the stream brings that change next), and the read is taken.
 */
export async function recheckRows(
  table: CompiledTable,
  keys: ReadonlyMap<string, { readonly key: readonly unknown[]; readonly image: StreamImage }>,
  keyIdOf: (key: readonly unknown[]) => string,
  fetchFlagged: FlaggedRowFetcher,
  wait: (ms: number) => Promise<unknown> = sleep,
): Promise<RecheckedRows> {
  const width = table.columns.length;
  const read = new Map<string, unknown[]>();
  let pending = [...keys.keys()];
  let staleReads = 0;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const rows = await fetchFlagged(
      table,
      pending.map((id) => keys.get(id)!.key),
    );
    const byId = new Map(rows.map((row) => [keyIdOf(table.primaryKey.map((c) => row[c])), row]));
    const stale: string[] = [];
    for (const id of pending) {
      const row = byId.get(id);
      if (row) read.set(id, row);
      else read.delete(id);
      if (attempt < RETRY_DELAYS_MS.length && !agrees(table, row, keys.get(id)!.image)) {
        stale.push(id);
      }
    }
    if (stale.length === 0) break;
    staleReads += stale.length;
    await wait(RETRY_DELAYS_MS[attempt] as number);
    pending = stale;
  }
  const served: unknown[][] = [];
  const unserved: (readonly unknown[])[] = [];
  for (const [id, { key }] of keys) {
    const row = read.get(id);
    if (row && Number(row[width]) === 1) served.push(row.slice(0, width));
    else unserved.push(key);
  }
  return { served, unserved, staleReads };
}

/**
 * Whether a read row agrees with the stream's image. Columns whose stream and query forms may
 * differ in representation (floating point, JSON text) are not compared.
 */
function agrees(table: CompiledTable, row: unknown[] | undefined, image: StreamImage): boolean {
  if (image === undefined) return true;
  if (image === null || row === undefined) return image === null && row === undefined;
  return table.columns.every((column, c) => {
    const expected = image[c];
    if (expected === undefined || column.type === 'float' || column.type === 'json') return true;
    return (
      canonicalToComparable(column.type, expected) === canonicalToComparable(column.type, row[c])
    );
  });
}
