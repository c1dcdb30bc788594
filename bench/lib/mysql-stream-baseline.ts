import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import mysql from 'mysql2';

/**
 * The load baseline: how long plain mysql2 takes just to stream every row of `tables` and throw
 * them away. This is what a user's own "read it all" code costs at least, so it is a fair floor
 * for a snapshot load. Deliberately the defaults a user gets: callback API `.stream()`, default
 * type casting (Dates, DECIMAL as string), rows as objects. Time includes connecting.
 */
export async function timeMysqlStream(
  url: string,
  tables: string[],
): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const connection = mysql.createConnection({ uri: url });
  let rows = 0;
  try {
    for (const table of tables) {
      // An object-mode sink that only counts: pipeline gives ordinary backpressure and errors.
      const discard = new Writable({
        objectMode: true,
        write(_row, _encoding, callback) {
          rows++;
          callback();
        },
      });
      await pipeline(connection.query(`SELECT * FROM \`${table}\``).stream(), discard);
    }
  } finally {
    await new Promise<void>((resolve) => connection.end(() => resolve()));
  }
  return { ms: performance.now() - started, rows };
}
