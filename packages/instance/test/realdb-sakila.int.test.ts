import { loadSakila, type TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';
import { sakilaAppQueries } from './realdb/app-queries.ts';
import { millisUntilMarkerServed } from './realdb/await-marker.ts';
import { compareEveryValue } from './realdb/compare-tables.ts';
import { mariaDbDialect } from './realdb/dialect.ts';
import { mariaDbRealSource } from './realdb/mariadb-real-source.ts';
import type { RealSource, SourceTable } from './realdb/real-source.ts';
import { report } from './realdb/report.ts';
import { runAppQueries } from './realdb/run-app-queries.ts';
import { writeToSakila } from './realdb/sakila-writes.ts';
import { walkAfter } from './realdb/walk-after.ts';

let db: TestDatabase;
let source: RealSource;
let tables: SourceTable[];
let served: TestInstance;

beforeAll(async () => {
  db = await testMariaDb().createDatabase();
  const started = performance.now();
  await loadSakila(db);
  report(`Sakila loaded in ${Math.round(performance.now() - started)} ms`);
  source = await mariaDbRealSource(db.url);
  tables = await source.tables();
  served = await startTestInstance(
    db.url,
    { tables: tables.map((table) => ({ name: table.name })), sync: { mode: 'cdc', interval: 0.1 } },
    { replicationId: db.name },
  );
}, 120_000);

afterAll(async () => {
  await served?.close();
  await source?.close();
  await db?.drop();
});

describe('Sakila on MariaDB, served by change data capture', () => {
  it('serves every value of every row of every base table exactly as the source holds it', async () => {
    const comparison = await compareEveryValue(source, served, tables);
    report(
      `Sakila after load: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared`,
    );
    expect(comparison.tables).toBe(16);
    expect(comparison.differences).toEqual([]);
  });

  it('answers application queries exactly as SQL does', async () => {
    const queries = sakilaAppQueries(mariaDbDialect);
    const results = await runAppQueries(queries, source, served);
    report(
      `Sakila: ${results.compared} application queries compared, ${results.failures.length} differ`,
    );
    expect(results.compared).toBeGreaterThanOrEqual(30);
    expect(results.failures).toEqual([]);
  });

  it('pages through whole tables with AFTER, every row exactly once', async () => {
    for (const [table, key] of [
      ['rental', 'rental_id'],
      ['film', 'film_id'],
      ['customer', 'customer_id'],
    ] as const) {
      const walk = await walkAfter(served, table, key, 700);
      const ids = await source.rows(
        `SELECT ${mariaDbDialect.text(key)} AS id FROM ${table} ORDER BY ${key}`,
      );
      expect(walk.values).toEqual(ids.map((row) => row.id));
      expect(new Set(walk.values).size).toBe(walk.values.length);
      // The last page may or may not announce the end itself: at most one empty page after it.
      expect(walk.pages).toBeGreaterThanOrEqual(Math.ceil(ids.length / 700));
      expect(walk.pages).toBeLessThanOrEqual(Math.ceil(ids.length / 700) + 1);
    }
  });

  it('is exact again one sync tick after writes of every kind, foreign-key actions included', {
    timeout: 90_000,
  }, async () => {
    await writeToSakila(source);
    const committedAt = performance.now();
    const convergedMs = await millisUntilMarkerServed(served, committedAt);
    report(
      `Sakila: last write's commit to convergence ${Math.round(convergedMs)} ms (sync interval 100 ms)`,
    );
    const comparison = await compareEveryValue(source, served, tables);
    report(
      `Sakila after writes: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared, ${comparison.differences.length} difference lines`,
    );
    const queries = await runAppQueries(sakilaAppQueries(mariaDbDialect), source, served);
    report(
      `Sakila after writes: ${queries.compared} application queries compared, ${queries.failures.length} differ`,
    );
    expect(comparison.differences).toEqual([]);
    expect(queries.failures).toEqual([]);
  });

  it('serves views named in the config, read like tables, every value as the source has it', async () => {
    const views: [string, string[]][] = [['actor_info', ['actor_id']]];
    const viewServed = await startTestInstance(
      db.url,
      {
        tables: [
          ...tables.map((table) => ({ name: table.name })),
          ...views.map(([name]) => ({ name })),
        ],
        sync: { mode: 'cdc', interval: 0.1 },
      },
      { replicationId: `${db.name}_views` },
    );
    try {
      const relations = await Promise.all(views.map(([name, key]) => source.relation(name, key)));
      const comparison = await compareEveryValue(source, viewServed, relations);
      report(
        `Sakila views: ${comparison.tables} views, ${comparison.rows} rows, ${comparison.values} values compared`,
      );
      expect(comparison.rows).toBeGreaterThan(0);
      expect(comparison.differences).toEqual([]);
    } finally {
      await viewServed.close();
    }
  });

  it('notices children a cascade changed when the instance has not applied them', async () => {
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
});
