import pg from 'pg';
import Cursor from 'pg-cursor';

/** Rows a cursor read asks for at a time: pg's own example size, big enough to keep the wire busy. */
const CURSOR_ROWS = 1000;

/**
 * The PostgreSQL load baseline, as `timeMysqlStream` is MySQL's: plain `pg` reading every row of
 * `tables` through a cursor and throwing them away, with the defaults a user gets (rows as
 * objects, pg-types' parsing: Dates, NUMERIC and BIGINT as strings). Time includes connecting.
 */
export async function timePgStream(
  url: string,
  tables: string[],
): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let rows = 0;
  try {
    for (const table of tables) {
      const cursor = client.query(new Cursor(`SELECT * FROM "${table}"`));
      for (;;) {
        const batch = await cursor.read(CURSOR_ROWS);
        if (batch.length === 0) break;
        rows += batch.length;
      }
      await cursor.close();
    }
  } finally {
    await client.end();
  }
  return { ms: performance.now() - started, rows };
}
