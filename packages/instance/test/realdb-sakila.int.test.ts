import { loadSakila } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { expect, it } from 'vitest';
import { compareEveryValue } from './realdb/compare-tables.ts';
import { mariaDbDialect } from './realdb/dialect.ts';
import { mariaDbRealSource } from './realdb/mariadb-real-source.ts';
import { writeToSakila } from './realdb/sakila-writes.ts';
import { describeSampleDatabase } from './realdb/sample-suite.ts';

describeSampleDatabase(
  {
    name: 'Sakila',
    engine: 'MariaDB',
    createDatabase: () => testMariaDb().createDatabase(),
    load: loadSakila,
    connect: mariaDbRealSource,
    dialect: mariaDbDialect,
    write: writeToSakila,
    tableCount: 16,
    views: [['actor_info', ['actor_id']]],
  },
  (context) => {
    it('notices children a cascade changed when the instance has not applied them', async () => {
      const { source, tables, served } = context();
      const admin = { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}` } };
      expect((await fetch(`${served.url}/replication/pause`, admin)).status).toBe(200);
      try {
        await source.exec('UPDATE actor SET actor_id = 2000 WHERE actor_id = 4');
        const stale = await compareEveryValue(
          source,
          served,
          tables.filter((table) => table.name === 'actor' || table.name === 'film_actor'),
        );
        expect(stale.differences.some((line) => line.startsWith('actor ["4"]'))).toBe(true);
        expect(stale.differences.some((line) => line.startsWith('film_actor ["2000",'))).toBe(true);
      } finally {
        expect((await fetch(`${served.url}/replication/resume`, admin)).status).toBe(200);
      }
    });
  },
);
