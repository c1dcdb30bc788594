import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { loadPagila, loadSakila, sampleDatabasesPresent } from '../src/index.ts';

/** Row counts of the published samples (Sakila 0.9; Pagila at the README's commit). */
const sakilaCounts = {
  actor: 200,
  address: 603,
  category: 16,
  city: 600,
  country: 109,
  customer: 599,
  film: 1000,
  film_actor: 5462,
  film_category: 1000,
  film_text: 1000,
  inventory: 4581,
  language: 6,
  payment: 16049,
  rental: 16044,
  staff: 2,
  store: 2,
};

describe.skipIf(!sampleDatabasesPresent('the real sample databases, loaded'))(
  'the real sample databases',
  () => {
    it('loads Sakila into a fresh MariaDB database, spatial column and triggers included', {
      timeout: 120_000,
    }, async () => {
      const db = await testMariaDb().createDatabase();
      const started = performance.now();
      await loadSakila(db);
      console.log(`Sakila loaded in ${Math.round(performance.now() - started)} ms`);
      for (const [table, count] of Object.entries(sakilaCounts)) {
        const [row] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`);
        expect({ table, count: Number(row?.n) }).toEqual({ table, count });
      }
      const [located] = await db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM address WHERE location IS NOT NULL',
      );
      expect(Number(located?.n)).toBe(603);
      const triggers = await db.query<{ name: string }>(
        'SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 1',
      );
      expect(triggers.map((t) => t.name)).toEqual([
        'customer_create_date',
        'del_film',
        'ins_film',
        'payment_date',
        'rental_date',
        'upd_film',
      ]);
      await db.drop();
    });

    it('loads Pagila into a fresh PostgreSQL database as published', {
      timeout: 120_000,
    }, async () => {
      const db = await testPostgres().createDatabase();
      const started = performance.now();
      await loadPagila(db);
      console.log(`Pagila loaded in ${Math.round(performance.now() - started)} ms`);
      const [payments] = await db.query<{ n: string }>('SELECT COUNT(*) AS n FROM payment');
      expect(Number(payments?.n)).toBe(16049);
      const [rentals] = await db.query<{ n: string }>('SELECT COUNT(*) AS n FROM rental');
      expect(Number(rentals?.n)).toBe(16044);
      const [owner] = await db.query<{ owner: string }>(
        "SELECT tableowner AS owner FROM pg_tables WHERE tablename = 'film'",
      );
      expect(owner?.owner).toBe('postgres');
      await db.drop();
    });
  },
);
