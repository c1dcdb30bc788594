import { loadPagila, type TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';
import { compareEveryValue } from './realdb/compare-tables.ts';
import { postgresRealSource } from './realdb/postgres-real-source.ts';
import type { RealSource, SourceTable } from './realdb/real-source.ts';
import { report } from './realdb/report.ts';

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
});
