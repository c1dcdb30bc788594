import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';

describe('introspection of views', () => {
  it('lists PostgreSQL views and materialized views apart from tables, with column types', async () => {
    const db = await testPostgres().createDatabase(`
      CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total NUMERIC(10,2));
      CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
      CREATE MATERIALIZED VIEW totals AS
        SELECT customer_id, SUM(total) AS spent, now() AS at FROM orders GROUP BY customer_id;
      CREATE MATERIALIZED VIEW later AS SELECT id FROM orders WITH NO DATA;
    `);
    const connector = connectorFromUrl(db.url);
    try {
      const schema = await connector.introspect();
      expect(schema.tables.map((table) => table.name)).toEqual(['orders']);
      expect(schema.views?.map((view) => [view.name, view.kind, view.populated])).toEqual([
        ['big_orders', 'view', undefined],
        ['later', 'materialized_view', false],
        ['totals', 'materialized_view', undefined],
      ]);
      const bigOrders = schema.views?.[0];
      expect(bigOrders?.columns).toEqual([
        { name: 'id', type: 'int', nullable: true, sourceType: 'integer' },
        expect.objectContaining({ name: 'total', type: 'decimal', sourceType: 'numeric(10,2)' }),
      ]);
      expect(bigOrders?.primaryKey).toEqual([]);
      expect(bigOrders?.foreignKeys).toEqual([]);
      expect(schema.views?.[2]?.columns.map((column) => [column.name, column.type])).toEqual([
        ['customer_id', 'int'],
        ['spent', 'decimal'],
        ['at', 'timestamp'],
      ]);
    } finally {
      await connector.close();
      await db.drop();
    }
  });

  it('lists MariaDB views apart from tables, with column types', async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2));
      CREATE VIEW customer_totals AS
        SELECT customer_id, SUM(total) AS spent, COUNT(*) AS n FROM orders GROUP BY customer_id;
    `);
    const connector = connectorFromUrl(db.url);
    try {
      const schema = await connector.introspect();
      expect(schema.tables.map((table) => table.name)).toEqual(['orders']);
      expect(schema.views).toEqual([
        {
          name: 'customer_totals',
          kind: 'view',
          columns: [
            expect.objectContaining({ name: 'customer_id', type: 'int', nullable: false }),
            expect.objectContaining({ name: 'spent', type: 'decimal', scale: 2 }),
            expect.objectContaining({ name: 'n', type: 'bigint' }),
          ],
          primaryKey: [],
          uniqueKeys: [],
          foreignKeys: [],
          estimatedRows: null,
        },
      ]);
    } finally {
      await connector.close();
      await db.drop();
    }
  });
});
