import { SchemaConfigError } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

type Engine = 'mariadb' | 'postgres';

/** Two tables joined by a view, a plain one-table view, and on PostgreSQL a materialized view. */
function viewsDdl(engine: Engine): string {
  const tables = `
    CREATE TABLE actor (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
    CREATE TABLE film_actor (actor_id INT NOT NULL, film_id INT NOT NULL, PRIMARY KEY (actor_id, film_id));
    INSERT INTO actor VALUES (1, 'Penelope'), (2, 'Nick'), (3, 'Ed');
    INSERT INTO film_actor VALUES (1, 10), (1, 11), (2, 10);
    CREATE VIEW actor_films AS
      SELECT a.id AS actor_id, a.name, COUNT(fa.film_id) AS films
      FROM actor a LEFT JOIN film_actor fa ON fa.actor_id = a.id
      GROUP BY a.id, a.name;
    CREATE VIEW actor_names AS SELECT id, name FROM actor;
  `;
  if (engine === 'mariadb') return tables;
  return `${tables}
    CREATE MATERIALIZED VIEW film_casts AS
      SELECT film_id, COUNT(*) AS actors FROM film_actor GROUP BY film_id;`;
}

const config = (engine: Engine) => ({
  tables: [
    { name: 'actor' },
    { name: 'actor_films', refresh_interval: 1 },
    { name: 'actor_names' },
    ...(engine === 'postgres' ? [{ name: 'film_casts', refresh_interval: 1 }] : []),
  ],
  sync: { mode: 'cdc', interval: 0.1 },
});

/** Rows with every value made plain: COUNT is a BIGINT, which engines deliver as text. */
function plain(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [
        key,
        typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value,
      ]),
    ),
  );
}

async function sourceView(db: TestDatabase, view: string, key: string) {
  return plain(await db.query<Record<string, unknown>>(`SELECT * FROM ${view} ORDER BY ${key}`));
}

async function servedView(served: TestInstance, view: string, key: string) {
  const body = await served.json(`${view} { * } ORDER BY ${key} LIMIT 100000`);
  return plain(body.data);
}

async function healthDetail(served: TestInstance) {
  return json(
    fetch(`${served.url}/health/detail`, {
      headers: { Authorization: `Bearer ${served.adminKey}` },
    }),
  );
}

describe.each([
  { engine: 'mariadb' as const, admin: testMariaDb },
  { engine: 'postgres' as const, admin: testPostgres },
])('views on $engine', ({ engine, admin }) => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await admin().createDatabase(viewsDdl(engine));
    served = await startTestInstance(db.url, config(engine), { replicationId: db.name });
  }, 60_000);

  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  it('serves a named view with the rows SELECT * gives, and no view it was not told to', async () => {
    expect(await servedView(served, 'actor_films', 'actor_id')).toEqual(
      await sourceView(db, 'actor_films', 'actor_id'),
    );
    expect(await servedView(served, 'actor_names', 'id')).toEqual(
      await sourceView(db, 'actor_names', 'id'),
    );
    const schema = await json(
      fetch(`${served.url}/schema`, { headers: { Authorization: `Bearer ${served.key}` } }),
    );
    const names = schema.tables.map((table: { name: string }) => table.name);
    expect(names).toContain('actor_films');
    expect(names).not.toContain('film_actor');
    expect(
      schema.tables.find((table: { name: string }) => table.name === 'actor_films'),
    ).toMatchObject({ kind: 'view', refreshInterval: 1 });
    expect(
      schema.tables.find((table: { name: string }) => table.name === 'actor'),
    ).not.toHaveProperty('kind');
  });

  it('re-reads a view at its interval after a write to a table under it', async () => {
    const before = (await healthDetail(served)).replication.views.find(
      (view: { table: string }) => view.table === 'actor_films',
    );
    await db.exec("INSERT INTO actor VALUES (4, 'Grace')");
    await db.exec('INSERT INTO film_actor VALUES (3, 12), (4, 10), (4, 12)');
    await db.exec('DELETE FROM film_actor WHERE actor_id = 1 AND film_id = 11');
    const expected = await sourceView(db, 'actor_films', 'actor_id');
    await eventually(async () => {
      expect(await servedView(served, 'actor_films', 'actor_id')).toEqual(expected);
    }, 10_000);
    // The base table follows its change stream, the view its own refreshes.
    expect(plain((await served.json('actor { * } ORDER BY id')).data)).toEqual(
      await sourceView(db, 'actor', 'id'),
    );
    const detail = await healthDetail(served);
    expect(detail.status).toBe('ok');
    const after = detail.replication.views.find(
      (view: { table: string }) => view.table === 'actor_films',
    );
    expect(after).toMatchObject({
      table: 'actor_films',
      kind: 'view',
      refresh_interval: 1,
      last_error: null,
    });
    expect(after.refreshes).toBeGreaterThan(before.refreshes);
    expect(Date.parse(after.last_refresh_at)).toBeGreaterThan(Date.parse(before.last_refresh_at));
    expect(detail.replication.views).toContainEqual(
      expect.objectContaining({ table: 'actor_names', kind: 'view', refresh_interval: 60 }),
    );
  });

  it('swaps nothing when a refresh finds the view unchanged', async () => {
    const refreshesOf = (detail: { replication: { views: { refreshes: number }[] } }) =>
      detail.replication.views.reduce((sum, view) => sum + view.refreshes, 0);
    const before = await healthDetail(served);
    let after = before;
    await eventually(async () => {
      after = await healthDetail(served);
      // actor_films (and film_casts) refresh every second: two rounds each at least.
      expect(refreshesOf(after)).toBeGreaterThanOrEqual(refreshesOf(before) + 4);
    }, 15_000);
    expect(after.snapshot.swap_count).toBe(before.snapshot.swap_count);
  });

  it.runIf(engine === 'postgres')(
    'serves a materialized view as of its last REFRESH MATERIALIZED VIEW',
    async () => {
      expect(await servedView(served, 'film_casts', 'film_id')).toEqual(
        await sourceView(db, 'film_casts', 'film_id'),
      );
      await db.exec('INSERT INTO film_actor VALUES (2, 13)');
      await db.exec('REFRESH MATERIALIZED VIEW film_casts');
      const expected = await sourceView(db, 'film_casts', 'film_id');
      expect(expected).toContainEqual({ film_id: 13, actors: 1 });
      await eventually(async () => {
        expect(await servedView(served, 'film_casts', 'film_id')).toEqual(expected);
      }, 10_000);
      const detail = await healthDetail(served);
      expect(detail.replication.views).toContainEqual(
        expect.objectContaining({ table: 'film_casts', kind: 'materialized_view' }),
      );
    },
  );

  it('names the closest view when the config names one that does not exist', async () => {
    const failure = await startTestInstance(db.url, { tables: [{ name: 'actor_film' }] }).then(
      (instance) => instance.close().then(() => null),
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SchemaConfigError);
    expect((failure as SchemaConfigError).issues).toEqual([
      {
        path: 'tables[0].name',
        message:
          'the source has no table or view "actor_film"; did you mean the view "actor_films"?',
      },
    ]);
  });

  it('refuses refresh_interval on a base table', async () => {
    const failure = await startTestInstance(db.url, {
      tables: [{ name: 'actor', refresh_interval: 5 }],
    }).then(
      (instance) => instance.close().then(() => null),
      (error: unknown) => error,
    );
    expect((failure as SchemaConfigError).issues?.[0]?.path).toBe('tables[0].refresh_interval');
  });
});
