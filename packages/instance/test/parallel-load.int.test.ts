import { compileSchema, parseSchemaConfig, sameContent } from '@replix/engine';
import { connectorFromUrl } from '@replix/sources';
import type { DatabaseAdmin, TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadProgress, loadSnapshot } from '../src/snapshot/snapshot-loader.ts';

/** Three tables, so that three threads each have something to read. */
const tables = (series: (n: number) => string) => `
  CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  CREATE TABLE child (id INT PRIMARY KEY, parent_id INT NOT NULL REFERENCES parent (id),
    amount DECIMAL(10,2), note VARCHAR(40));
  CREATE TABLE other (k VARCHAR(10) PRIMARY KEY, n BIGINT);
  INSERT INTO parent SELECT i, CONCAT('p', i) FROM ${series(500)};
  INSERT INTO child SELECT i, 1 + i % 500, i / 4, CASE WHEN i % 3 = 0 THEN NULL ELSE CONCAT('n', i) END
    FROM ${series(20000)};
  INSERT INTO other SELECT CONCAT('k', i), i * 1000000007 FROM ${series(300)};
`;

const engines: { name: string; admin: () => DatabaseAdmin; series: (n: number) => string }[] = [
  {
    name: 'MariaDB',
    admin: testMariaDb,
    series: (n) => `(SELECT seq AS i FROM seq_1_to_${n}) AS s`,
  },
  {
    name: 'PostgreSQL',
    admin: testPostgres,
    series: (n) => `generate_series(1::bigint, ${n}) AS i`,
  },
];

describe.each(engines)('loading a snapshot on several threads ($name)', ({ admin, series }) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await admin().createDatabase(tables(series));
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('builds the same generation as one thread, with every row counted', async () => {
    const connector = connectorFromUrl(db.url);
    try {
      const schema = compileSchema(await connector.introspect(), parseSchemaConfig({}));
      const one = await loadSnapshot(connector, schema, 1, () => {}, { threads: 1 });
      let last: LoadProgress | undefined;
      const three = await loadSnapshot(
        connector,
        schema,
        1,
        (progress) => {
          last = progress;
        },
        { threads: 3 },
      );
      expect(sameContent(one.generation, three.generation)).toBe(true);
      expect(three.generation.table('child').data.liveRows).toBe(20000);
      expect(last).toEqual({ tablesDone: 3, tablesTotal: 3, rowsLoaded: 20000 + 500 + 300 });
    } finally {
      await connector.close();
    }
  });

  it('fails the load with the error of a table a worker read, and leaves nothing open', async () => {
    const connector = connectorFromUrl(db.url);
    try {
      // Tables are taken in schema order (by API name): `child` here, `other` by the first worker.
      const schema = compileSchema(
        await connector.introspect(),
        parseSchemaConfig({ tables: [{ name: 'other', where: 'no_such_column = 1' }] }),
      );
      await expect(
        loadSnapshot(connector, schema, 1, () => {}, { threads: 3 }),
      ).rejects.toMatchObject({ code: 'source_query_failed' });
      // The source is usable again at once: every lock and session of the load is gone.
      const again = compileSchema(await connector.introspect(), parseSchemaConfig({}));
      const loaded = await loadSnapshot(connector, again, 2, () => {}, { threads: 3 });
      expect(loaded.generation.table('other').data.liveRows).toBe(300);
    } finally {
      await connector.close();
    }
  });
});
