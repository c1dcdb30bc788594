/**
 * Partitioned tables served as one table: PostgreSQL's with the foreign keys declared on its
 * partitions (as Pagila's `payment` has them) and MariaDB's, followed by CDC across partitions.
 */
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import { eventually } from './replication-harness.ts';

// Pagila's shape: the partitions are made apart and attached, and each declares its own keys.
const SETUP = `
  CREATE TABLE customer (customer_id int PRIMARY KEY, name text NOT NULL);
  INSERT INTO customer VALUES (1, 'Ada'), (2, 'Grace');
  CREATE TABLE payment (
    payment_id int NOT NULL, customer_id int NOT NULL, amount numeric(5,2) NOT NULL,
    payment_date date NOT NULL, PRIMARY KEY (payment_date, payment_id)
  ) PARTITION BY RANGE (payment_date);
  CREATE TABLE payment_p1 (payment_id int NOT NULL, customer_id int NOT NULL,
    amount numeric(5,2) NOT NULL, payment_date date NOT NULL);
  CREATE TABLE payment_p2 (payment_id int NOT NULL, customer_id int NOT NULL,
    amount numeric(5,2) NOT NULL, payment_date date NOT NULL);
  ALTER TABLE payment ATTACH PARTITION payment_p1 FOR VALUES FROM ('2022-01-01') TO ('2022-02-01');
  ALTER TABLE payment ATTACH PARTITION payment_p2 FOR VALUES FROM ('2022-02-01') TO ('2022-03-01');
  ALTER TABLE payment_p1 ADD CONSTRAINT payment_p1_customer_id_fkey
    FOREIGN KEY (customer_id) REFERENCES customer (customer_id);
  ALTER TABLE payment_p2 ADD CONSTRAINT payment_p2_customer_id_fkey
    FOREIGN KEY (customer_id) REFERENCES customer (customer_id);
  INSERT INTO payment VALUES (1, 1, 1.99, '2022-01-05'), (2, 2, 2.99, '2022-02-07');
  -- A key that references one partition: it is a key to the partitioned table.
  CREATE TABLE refund (refund_id int PRIMARY KEY, payment_id int NOT NULL,
    payment_date date NOT NULL,
    FOREIGN KEY (payment_date, payment_id) REFERENCES payment_p1 (payment_date, payment_id));
  INSERT INTO refund VALUES (10, 1, '2022-01-05');
`;

type Payment = { payment_id: number; customer_id: number; amount: number; payment_date: string };

describe('a PostgreSQL partitioned table', () => {
  let db: TestDatabase;
  let served: TestInstance;

  beforeAll(async () => {
    db = await testPostgres().createDatabase(SETUP);
    served = await startTestInstance(
      db.url,
      { sync: { mode: 'cdc', interval: 0.1 } },
      { replicationId: db.name },
    );
  });

  afterAll(async () => {
    await served?.close();
    await db?.drop();
  });

  async function sourcePayments(): Promise<Payment[]> {
    const rows = await db.query<Record<string, unknown>>(
      `SELECT payment_id, customer_id, amount::float8 AS amount,
         to_char(payment_date, 'YYYY-MM-DD') AS payment_date
       FROM payment ORDER BY payment_id`,
    );
    return rows.map((row) => ({
      payment_id: Number(row.payment_id),
      customer_id: Number(row.customer_id),
      amount: Number(row.amount),
      payment_date: String(row.payment_date),
    }));
  }

  const servedPayments = async (): Promise<Payment[]> =>
    (
      await served.json(
        'payment { payment_id customer_id amount payment_date } ORDER BY payment_id',
      )
    ).data as Payment[];

  it('is one table; its partitions are not tables of their own', async () => {
    const schema = await json(
      fetch(`${served.url}/schema`, { headers: { Authorization: `Bearer ${served.key}` } }),
    );
    expect(schema.tables.map((table: { name: string }) => table.name)).toEqual([
      'customer',
      'payment',
      'refund',
    ]);
    expect(await servedPayments()).toEqual(await sourcePayments());
    const refused = await served.query('payment_p1 { payment_id }');
    expect(refused.status).toBe(404);
  });

  it('has the relations of the keys its partitions declare, both ways, once', async () => {
    const forward = await served.json(
      'payment { payment_id customer { name } } ORDER BY payment_id',
    );
    expect(forward.data).toEqual([
      { payment_id: 1, customer: { name: 'Ada' } },
      { payment_id: 2, customer: { name: 'Grace' } },
    ]);
    const reverse = await served.json('customer { name payment { amount } } ORDER BY customer_id');
    expect(reverse.data).toEqual([
      { name: 'Ada', payment: [{ amount: 1.99 }] },
      { name: 'Grace', payment: [{ amount: 2.99 }] },
    ]);
    const schema = await json(
      fetch(`${served.url}/schema`, { headers: { Authorization: `Bearer ${served.key}` } }),
    );
    const payment = schema.tables.find((table: { name: string }) => table.name === 'payment');
    expect(payment.relations.map((relation: { name: string }) => relation.name)).toEqual([
      'customer',
      'refund',
    ]);
  });

  it('maps a key that references a partition to the partitioned table', async () => {
    const refunds = await served.json('refund { refund_id payment { amount } }');
    expect(refunds.data).toEqual([{ refund_id: 10, payment: { amount: 1.99 } }]);
  });

  it('follows inserts into two partitions, a row moved between them and a delete', async () => {
    await db.exec(`
      INSERT INTO payment VALUES (3, 1, 3.50, '2022-01-20'), (4, 2, 4.25, '2022-02-20');
      UPDATE payment SET payment_date = '2022-02-11', amount = 5.00 WHERE payment_id = 3;
      UPDATE payment SET customer_id = 1 WHERE payment_id = 4;
      DELETE FROM payment WHERE payment_id = 2;
    `);
    const expected = await sourcePayments();
    expect(expected.map((row) => row.payment_id)).toEqual([1, 3, 4]);
    await eventually(async () => {
      expect(await servedPayments()).toEqual(expected);
    });
    const moved = await db.query<{ partition: string }>(
      'SELECT tableoid::regclass::text AS partition FROM payment WHERE payment_id = 3',
    );
    expect(moved[0]?.partition).toBe('payment_p2');
    const ada = await served.json(
      'customer (customer_id = 1) { payment { payment_id } ORDER BY payment_id }',
    );
    expect(ada.data).toEqual([
      { payment: [{ payment_id: 1 }, { payment_id: 3 }, { payment_id: 4 }] },
    ]);
  });
});

describe('a MariaDB partitioned table', () => {
  it('is one table already, followed by CDC across its partitions', async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE payment (payment_id INT NOT NULL, amount DECIMAL(5,2) NOT NULL,
        payment_date DATE NOT NULL, PRIMARY KEY (payment_id, payment_date))
        PARTITION BY RANGE COLUMNS (payment_date) (
          PARTITION p1 VALUES LESS THAN ('2022-02-01'),
          PARTITION p2 VALUES LESS THAN ('2022-03-01'));
      INSERT INTO payment VALUES (1, 1.99, '2022-01-05'), (2, 2.99, '2022-02-07');
    `);
    const served = await startTestInstance(
      db.url,
      { sync: { mode: 'cdc', interval: 0.1 } },
      { replicationId: db.name },
    );
    try {
      const schema = await json(
        fetch(`${served.url}/schema`, { headers: { Authorization: `Bearer ${served.key}` } }),
      );
      expect(schema.tables.map((table: { name: string }) => table.name)).toEqual(['payment']);
      await db.exec(`
        INSERT INTO payment VALUES (3, 3.50, '2022-01-20');
        UPDATE payment SET payment_date = '2022-02-11' WHERE payment_id = 3;
        DELETE FROM payment WHERE payment_id = 2;
      `);
      await eventually(async () => {
        const body = await served.json('payment { payment_id payment_date } ORDER BY payment_id');
        expect(body.data).toEqual([
          { payment_id: 1, payment_date: '2022-01-05' },
          { payment_id: 3, payment_date: '2022-02-11' },
        ]);
      });
    } finally {
      await served.close();
      await db.drop();
    }
  });
});
