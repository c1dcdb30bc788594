import type { SourceColumn } from '@replix/engine';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import type { RowsRequest } from '../src/rows-request.ts';

const ID: SourceColumn = { name: 'id', type: 'int', nullable: false, sourceType: 'int' };

function request(where: string, keys: RowsRequest['keys']): RowsRequest {
  return { table: 'items', columns: [ID], keyColumns: ['id'], keys, where };
}

/**
 * Poll-mode and by-key reads (`readRows`) run in read-only transactions: a `where` that calls
 * something that writes fails, the write is not kept, and the connector goes on reading.
 */
describe('readRows runs in a read-only transaction', () => {
  it('on MariaDB: a where calling a function that writes is refused and writes nothing', async () => {
    const db = await testMariaDb().createDatabase('CREATE TABLE items (id INT PRIMARY KEY)');
    await db.exec('INSERT INTO items VALUES (1), (2), (3)');
    await db.exec('CREATE TABLE side_effects (n INT)');
    await db.exec(
      'CREATE FUNCTION note_read() RETURNS INT DETERMINISTIC MODIFIES SQL DATA BEGIN INSERT INTO side_effects VALUES (1); RETURN 1; END',
    );
    const connector = connectorFromUrl(db.url);
    try {
      for (const keys of [null, [[1], [2]]]) {
        await expect(connector.readRows(request('note_read() = 1', keys))).rejects.toThrow();
      }
      const honest = await connector.readRows(request('id > 1', null));
      expect(honest.map(([id]) => id).sort()).toEqual([2, 3]);
      expect(await db.query('SELECT COUNT(*) AS n FROM side_effects')).toEqual([{ n: 0 }]);
    } finally {
      await connector.close();
      await db.drop();
    }
  });

  it('on PostgreSQL: a where advancing a sequence is refused and the sequence stays put', async () => {
    const db = await testPostgres().createDatabase(
      'CREATE TABLE items (id INT PRIMARY KEY); INSERT INTO items VALUES (1), (2), (3); CREATE SEQUENCE reads',
    );
    const connector = connectorFromUrl(db.url);
    try {
      for (const keys of [null, [[1], [2]]]) {
        await expect(connector.readRows(request("nextval('reads') > 0", keys))).rejects.toThrow();
      }
      const honest = await connector.readRows(request('id > 1', null));
      expect(honest.map(([id]) => id).sort()).toEqual([2, 3]);
      expect(await db.query('SELECT last_value, is_called FROM reads')).toEqual([
        { last_value: '1', is_called: false },
      ]);
    } finally {
      await connector.close();
      await db.drop();
    }
  });
});
