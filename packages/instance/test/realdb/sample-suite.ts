import { sampleDatabasesPresent, type TestDatabase } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from '../instance-helpers.ts';
import { sakilaAppQueries } from './app-queries.ts';
import { millisUntilMarkerServed } from './await-marker.ts';
import { compareEveryValue } from './compare-tables.ts';
import type { Dialect } from './dialect.ts';
import type { RealSource, SourceTable } from './real-source.ts';
import { report } from './report.ts';
import { runAppQueries } from './run-app-queries.ts';
import { walkAfter } from './walk-after.ts';

/** What is served and compared of one sample database on one source engine. */
export interface SampleDatabase {
  /** `Sakila`, `Pagila`: the name in titles and reports. */
  readonly name: string;
  /** `MariaDB`, `PostgreSQL`. */
  readonly engine: string;
  readonly createDatabase: () => Promise<TestDatabase>;
  readonly load: (db: TestDatabase) => Promise<void>;
  readonly connect: (url: string) => Promise<RealSource>;
  readonly dialect: Dialect;
  /** Writes of every kind, ending with the marker row `millisUntilMarkerServed` waits for. */
  readonly write: (source: RealSource) => Promise<void>;
  /** Base tables served (partitions are not tables of their own). */
  readonly tableCount: number;
  /** Views to name in the config, each with the columns that identify its rows. */
  readonly views: readonly (readonly [string, readonly string[]])[];
  /** What an application does before it reads the views (refresh a materialized one). */
  readonly prepareViews?: (source: RealSource) => Promise<void>;
}

/** The running sample, for tests a sample adds of its own. */
export interface SampleContext {
  readonly source: RealSource;
  readonly tables: readonly SourceTable[];
  readonly served: TestInstance;
}

/**
 * Loads `sample` into a throwaway server, serves every base table by change data capture and
 * checks it is exact: every value of every row, application queries against SQL, AFTER walks,
 * then the same after writes of every kind, and the views. `more` adds the sample's own tests.
 */
export function describeSampleDatabase(
  sample: SampleDatabase,
  more?: (context: () => SampleContext) => void,
): void {
  const title = `${sample.name} on ${sample.engine} (../shared/realdb-samples)`;
  describe.skipIf(!sampleDatabasesPresent(title))(title, () => {
    suiteOf(sample, more);
  });
}

function suiteOf(sample: SampleDatabase, more?: (context: () => SampleContext) => void): void {
  let db: TestDatabase;
  let source: RealSource;
  let tables: SourceTable[];
  let served: TestInstance;

  beforeAll(async () => {
    db = await sample.createDatabase();
    const started = performance.now();
    await sample.load(db);
    report(`${sample.name} loaded in ${Math.round(performance.now() - started)} ms`);
    source = await sample.connect(db.url);
    tables = await source.tables();
    served = await startTestInstance(
      db.url,
      {
        tables: tables.map((table) => ({ name: table.name })),
        sync: { mode: 'cdc', interval: 0.1 },
      },
      { replicationId: db.name },
    );
  }, 120_000);

  afterAll(async () => {
    await served?.close();
    await source?.close();
    await db?.drop();
  });

  describe(`${sample.name} on ${sample.engine}, served by change data capture`, () => {
    it('serves every value of every row of every base table exactly as the source holds it', async () => {
      const comparison = await compareEveryValue(source, served, tables);
      report(
        `${sample.name} after load: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared`,
      );
      expect(comparison.tables).toBe(sample.tableCount);
      expect(comparison.differences).toEqual([]);
    });

    it('answers application queries exactly as SQL does', async () => {
      const results = await runAppQueries(sakilaAppQueries(sample.dialect), source, served);
      report(
        `${sample.name}: ${results.compared} application queries compared, ${results.failures.length} differ`,
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
          `SELECT ${sample.dialect.text(key)} AS id FROM ${table} ORDER BY ${key}`,
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
      await sample.write(source);
      const committedAt = performance.now();
      const convergedMs = await millisUntilMarkerServed(served, committedAt);
      report(
        `${sample.name}: last write's commit to convergence ${Math.round(convergedMs)} ms (sync interval 100 ms)`,
      );
      const comparison = await compareEveryValue(source, served, tables);
      report(
        `${sample.name} after writes: ${comparison.tables} tables, ${comparison.rows} rows, ${comparison.values} values compared, ${comparison.differences.length} difference lines`,
      );
      const queries = await runAppQueries(sakilaAppQueries(sample.dialect), source, served);
      report(
        `${sample.name} after writes: ${queries.compared} application queries compared, ${queries.failures.length} differ`,
      );
      expect(comparison.differences).toEqual([]);
      expect(queries.failures).toEqual([]);
    });

    it('serves views named in the config, read like tables, every value as the source has it', async () => {
      await sample.prepareViews?.(source);
      const viewServed = await startTestInstance(
        db.url,
        {
          tables: [
            ...tables.map((table) => ({ name: table.name })),
            ...sample.views.map(([name]) => ({ name })),
          ],
          sync: { mode: 'cdc', interval: 0.1 },
        },
        { replicationId: `${db.name}_views` },
      );
      try {
        const relations = await Promise.all(
          sample.views.map(([name, key]) => source.relation(name, [...key])),
        );
        const comparison = await compareEveryValue(source, viewServed, relations);
        report(
          `${sample.name} views: ${comparison.tables} views, ${comparison.rows} rows, ${comparison.values} values compared`,
        );
        expect(comparison.rows).toBeGreaterThan(0);
        expect(comparison.differences).toEqual([]);
      } finally {
        await viewServed.close();
      }
    });

    more?.(() => ({ source, tables, served }));
  });
}
