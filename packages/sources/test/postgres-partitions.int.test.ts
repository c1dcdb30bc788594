/** A partitioned table as the PostgreSQL connector introspects and streams it. */
import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PositionExpiredError } from '../src/errors.ts';
import type { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import { atLeast, postgresConnector, tableNamed, takeChanges } from './postgres-cdc-helpers.ts';

const admin = testPostgres();

const SETUP = `
  CREATE TABLE customer (customer_id int PRIMARY KEY);
  CREATE TABLE store (store_id int PRIMARY KEY);
  CREATE TABLE payment (payment_id int NOT NULL, customer_id int NOT NULL, store_id int,
    at date NOT NULL, PRIMARY KEY (at, payment_id)) PARTITION BY RANGE (at);
  CREATE TABLE payment_a PARTITION OF payment FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
  CREATE TABLE payment_b PARTITION OF payment FOR VALUES FROM ('2022-02-01') TO ('2022-03-01')
    PARTITION BY RANGE (at);
  CREATE TABLE payment_b1 PARTITION OF payment_b FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
  -- The same key on every leaf, under one name twice; another key on the parent itself.
  ALTER TABLE payment_a ADD CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customer;
  ALTER TABLE payment_b1 ADD CONSTRAINT fk_customer FOREIGN KEY (customer_id) REFERENCES customer;
  ALTER TABLE payment ADD CONSTRAINT payment_store_fkey FOREIGN KEY (store_id) REFERENCES store;
`;

describe('PostgreSQL partitioned tables', () => {
  let db: TestDatabase;
  let connector: PostgresConnector;
  let tables: readonly SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase(SETUP);
    connector = postgresConnector(db);
    tables = (await connector.introspect()).tables;
  });

  afterAll(async () => {
    await connector?.dropReplication();
    await connector?.close();
    await db?.drop();
  });

  it('introspects the root with the keys of its partitions, once each, and no partition', () => {
    expect(tables.map((table) => table.name)).toEqual(['customer', 'payment', 'store']);
    const payment = tableNamed(tables, 'payment');
    expect(payment.primaryKey).toEqual(['at', 'payment_id']);
    expect(
      payment.foreignKeys.map(({ name, columns, referencedTable, referencedColumns }) => ({
        name,
        columns,
        referencedTable,
        referencedColumns,
      })),
    ).toEqual([
      {
        name: 'fk_customer',
        columns: ['customer_id'],
        referencedTable: 'customer',
        referencedColumns: ['customer_id'],
      },
      {
        name: 'payment_store_fkey',
        columns: ['store_id'],
        referencedTable: 'store',
        referencedColumns: ['store_id'],
      },
    ]);
  });

  it('streams changes of every partition, nested ones too, as the root table', async () => {
    const payment = tableNamed(tables, 'payment');
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['payment'] });
    await reader.close();
    await db.exec(`
      INSERT INTO customer VALUES (1);
      INSERT INTO payment VALUES (1, 1, NULL, '2022-01-03'), (2, 1, NULL, '2022-02-03');
      UPDATE payment SET at = '2022-02-10' WHERE payment_id = 1;
      DELETE FROM payment WHERE payment_id = 2;
    `);
    const { changes } = await takeChanges(connector, [payment], reader.position!, atLeast(5));
    expect(changes).toEqual([
      { op: 'insert', table: 'payment', row: [1, 1, null, '2022-01-03'] },
      { op: 'insert', table: 'payment', row: [2, 1, null, '2022-02-03'] },
      // A row moved between partitions is a delete from one and an insert into the other.
      { op: 'delete', table: 'payment', row: [1, undefined, undefined, '2022-01-03'] },
      { op: 'insert', table: 'payment', row: [1, 1, null, '2022-02-10'] },
      { op: 'delete', table: 'payment', row: [2, undefined, undefined, '2022-02-03'] },
    ]);
  });

  it('asks for a new snapshot when the publication does not publish through the root', async () => {
    const payment = tableNamed(tables, 'payment');
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['payment'] });
    await reader.close();
    await db.exec(
      `ALTER PUBLICATION "${connector.replicationName}" SET (publish_via_partition_root = false)`,
    );
    let error: unknown;
    try {
      await takeChanges(connector, [payment], reader.position!, atLeast(1), { timeoutMs: 3_000 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PositionExpiredError);
  });
});
