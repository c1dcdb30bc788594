import { loadPagila, type TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';
import { sakilaAppQueries } from './realdb/app-queries.ts';
import { millisUntilMarkerServed } from './realdb/await-marker.ts';
import { compareEveryValue } from './realdb/compare-tables.ts';
import { postgresDialect } from './realdb/dialect.ts';
import { writeToPagila } from './realdb/pagila-writes.ts';
import { postgresRealSource } from './realdb/postgres-real-source.ts';
import type { RealSource, SourceTable } from './realdb/real-source.ts';
import { report } from './realdb/report.ts';
import { runAppQueries } from './realdb/run-app-queries.ts';
import { walkAfter } from './realdb/walk-after.ts';

let db: TestDatabase;
let source: RealSource;
let tables: SourceTable[];
let served: TestInstance;

beforeAll(async () => {
  db = await testPostgres().createDatabase();
  const started = performance.now();
  await loadPagila(db);
  report(`Pagila loaded in ${Math.round(performance.now() - started)} ms`);
  source = await postgresRealSource(db.url);
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

describe('Pagila on PostgreSQL, served by change data capture', () => {
  it('serves every value of every row of every base table exactly as the source holds it', async () => {
    const comparison = await compareEveryValue(source, served, tables);
    report(
      `Pagila after load: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared`,
    );
    expect(comparison.tables).toBe(15);
    expect(comparison.differences).toEqual([]);
  });

  it('answers application queries exactly as SQL does', async () => {
    const queries = sakilaAppQueries(postgresDialect);
    const results = await runAppQueries(queries, source, served);
    report(
      `Pagila: ${results.compared} application queries compared, ${results.failures.length} differ`,
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
        `SELECT ${postgresDialect.text(key)} AS id FROM ${table} ORDER BY ${key}`,
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
    await writeToPagila(source);
    const committedAt = performance.now();
    const convergedMs = await millisUntilMarkerServed(served, committedAt);
    report(
      `Pagila: last write's commit to convergence ${Math.round(convergedMs)} ms (sync interval 100 ms)`,
    );
    const comparison = await compareEveryValue(source, served, tables);
    report(
      `Pagila after writes: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared, ${comparison.differences.length} difference lines`,
    );
    const queries = await runAppQueries(sakilaAppQueries(postgresDialect), source, served);
    report(
      `Pagila after writes: ${queries.compared} application queries compared, ${queries.failures.length} differ`,
    );
    expect(comparison.differences).toEqual([]);
    expect(queries.failures).toEqual([]);
  });

  it('serves views named in the config, read like tables, every value as the source has it', async () => {
    const views: [string, string[]][] = [
      ['actor_info', ['actor_id']],
      ['rental_by_category', ['category']],
    ];
    // Pagila creates the materialized view WITH NO DATA; an application refreshes it first.
    await source.exec('REFRESH MATERIALIZED VIEW rental_by_category');
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
        `Pagila views: ${comparison.tables} views, ${comparison.rows} rows, ${comparison.values} values compared`,
      );
      expect(comparison.rows).toBeGreaterThan(0);
      expect(comparison.differences).toEqual([]);
    } finally {
      await viewServed.close();
    }
  });
});
