import type { SourceTable } from '@replix/engine';
import { freePort, type TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotReader, SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { SourceConnectionError, SourceError, SourceQueryError } from '../src/errors.ts';

const admin = testPostgres();

async function readAll(reader: SnapshotReader, table: SourceTable, where?: string) {
  const batches: unknown[][][] = [];
  for await (const batch of reader.readTable({
    table: table.name,
    columns: table.columns,
    where,
  })) {
    batches.push(batch);
  }
  return batches;
}

function tableNamed(tables: readonly SourceTable[], name: string): SourceTable {
  const table = tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
}

async function rejection(work: Promise<unknown>): Promise<SourceError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof SourceError) return error;
    throw error;
  }
  throw new Error('expected a SourceError');
}

const EVERY_TYPE_DDL = `
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE DOMAIN positive_int AS int CHECK (VALUE > 0);
CREATE TABLE every_type (
  id int PRIMARY KEY,
  c_int2 int2,
  c_int4 int4,
  c_int8 int8,
  c_float4 float4,
  c_float8 float8,
  c_numeric numeric(30,10),
  c_numeric_free numeric,
  c_bool boolean,
  c_char char(5),
  c_varchar varchar(20) NOT NULL DEFAULT '',
  c_text text,
  c_uuid uuid,
  c_inet inet,
  c_macaddr macaddr,
  c_interval interval,
  c_json json,
  c_jsonb jsonb,
  c_date date,
  c_timestamp timestamp(3),
  c_timestamptz timestamptz,
  c_time time,
  c_timetz timetz,
  c_bytea bytea,
  c_int_array int[],
  c_mood mood,
  c_domain positive_int,
  c_bit1 bit(1)
);
INSERT INTO every_type VALUES (
  1, -32768, 2147483647, -9223372036854775808, 1.5, 0.30000000000000004,
  12345678901234567890.1234567891, 3.14159265358979323846264338327950288,
  true, 'ab', 'héllo wörld ✓', 'a longer text', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '192.168.0.1/24', '08:00:2b:01:02:03', '1 year 2 months 3 days 04:05:06.5',
  '{"b": 1,  "a": [1, 2.50]}', '{"b": 1,  "a": [1, 2.50]}',
  '2024-02-29', '2024-02-29 23:59:59.1239', '2024-02-29 23:59:59.123456+05:30',
  '23:59:59.999999', '01:30:00+02', '\\xDEADBEEF', '{1,2,3}', 'happy', 7, B'1'
);
INSERT INTO every_type (id) VALUES (2);
INSERT INTO every_type (id, c_numeric, c_date, c_timestamp, c_timestamptz)
  VALUES (3, 'NaN', 'infinity', '-infinity', 'infinity');
`;

describe('PostgresConnector', () => {
  let db: TestDatabase;
  let connector: SourceConnector;

  beforeAll(async () => {
    db = await admin.createDatabase(EVERY_TYPE_DDL);
    connector = connectorFromUrl(db.url);
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  it('introspects a column of every type', async () => {
    const schema = await connector.introspect();
    expect(schema.tables.map((table) => table.name)).toEqual(['every_type']);
    const table = tableNamed(schema.tables, 'every_type');
    expect(table.primaryKey).toEqual(['id']);
    expect(table.uniqueKeys).toEqual([]);
    expect(table.foreignKeys).toEqual([]);
    expect(
      table.columns.map((column) => [column.name, column.type, column.sourceType, column.nullable]),
    ).toEqual([
      ['id', 'int', 'integer', false],
      ['c_int2', 'int', 'smallint', true],
      ['c_int4', 'int', 'integer', true],
      ['c_int8', 'bigint', 'bigint', true],
      ['c_float4', 'float', 'real', true],
      ['c_float8', 'float', 'double precision', true],
      ['c_numeric', 'decimal', 'numeric(30,10)', true],
      ['c_numeric_free', 'decimal', 'numeric', true],
      ['c_bool', 'boolean', 'boolean', true],
      ['c_char', 'string', 'character(5)', true],
      ['c_varchar', 'string', 'character varying(20)', false],
      ['c_text', 'string', 'text', true],
      ['c_uuid', 'string', 'uuid', true],
      ['c_inet', 'string', 'inet', true],
      ['c_macaddr', 'string', 'macaddr', true],
      ['c_interval', 'string', 'interval', true],
      ['c_json', 'json', 'json', true],
      ['c_jsonb', 'json', 'jsonb', true],
      ['c_date', 'date', 'date', true],
      ['c_timestamp', 'timestamp', 'timestamp(3) without time zone', true],
      ['c_timestamptz', 'timestamp', 'timestamp with time zone', true],
      ['c_time', 'time', 'time without time zone', true],
      ['c_timetz', 'time', 'time with time zone', true],
      ['c_bytea', 'binary', 'bytea', true],
      ['c_int_array', 'array', 'integer[]', true],
      ['c_mood', 'string', 'mood', true],
      ['c_domain', 'int', 'positive_int', true],
      ['c_bit1', 'boolean', 'bit(1)', true],
    ]);
    const scaleOf = (name: string) => table.columns.find((column) => column.name === name)?.scale;
    expect(scaleOf('c_numeric')).toBe(10);
    expect(scaleOf('c_numeric_free')).toBeUndefined();
  });

  it('delivers every value in its canonical form', async () => {
    const table = tableNamed((await connector.introspect()).tables, 'every_type');
    const reader = await connector.openSnapshot();
    try {
      const batches = await readAll(reader, table);
      expect(batches).toHaveLength(1);
      const rows = [...(batches[0] ?? [])].sort((a, b) => Number(a[0]) - Number(b[0]));
      expect(rows[0]).toEqual([
        1,
        -32768,
        2147483647,
        '-9223372036854775808',
        1.5,
        0.30000000000000004,
        '12345678901234567890.1234567891',
        '3.14159265358979323846264338327950288',
        true,
        'ab', // character(5) without its padding
        'héllo wörld ✓',
        'a longer text',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
        '192.168.0.1/24',
        '08:00:2b:01:02:03',
        'P1Y2M3DT4H5M6.5S',
        '{"b": 1,  "a": [1, 2.50]}',
        '{"a": [1, 2.50], "b": 1}',
        '2024-02-29',
        // timestamp(3) rounds on the way in; reading truncates nothing further.
        Date.UTC(2024, 1, 29, 23, 59, 59, 124) * 1000,
        Date.UTC(2024, 1, 29, 18, 29, 59, 123) * 1000 + 456,
        86_399.999999,
        84_600,
        Buffer.from([0xde, 0xad, 0xbe, 0xef]),
        '[1,2,3]',
        'happy',
        7,
        true,
      ]);
      expect(rows[0]?.[23]).toBeInstanceOf(Uint8Array);
      expect(rows[1]).toEqual([
        2,
        ...Array.from({ length: 9 }, () => null),
        '',
        ...Array.from({ length: 17 }, () => null),
      ]);
      // NaN is no exact decimal, and infinities name no instant or day: null.
      expect([rows[2]?.[6], rows[2]?.[18], rows[2]?.[19], rows[2]?.[20]]).toEqual([
        null,
        null,
        null,
        null,
      ]);
    } finally {
      await reader.close();
    }
  });
});

describe('PostgresConnector introspection of keys', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE SCHEMA other;
      CREATE TABLE other.ext (id int PRIMARY KEY, note text);
      CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE);
      CREATE UNIQUE INDEX customers_email_lower ON customers (lower(email));
      CREATE UNIQUE INDEX customers_partial ON customers (id) WHERE id > 10;
      CREATE TABLE products (
        region char(2) NOT NULL,
        sku text NOT NULL,
        name text,
        PRIMARY KEY (region, sku)
      );
      CREATE TABLE orders (
        id bigint PRIMARY KEY,
        customer_id int NOT NULL CONSTRAINT fk_orders_customer REFERENCES customers (id),
        ext_id int CONSTRAINT fk_orders_ext REFERENCES other.ext (id)
      );
      CREATE TABLE order_lines (
        order_id bigint NOT NULL,
        line_no int NOT NULL,
        sku text NOT NULL,
        region char(2) NOT NULL,
        PRIMARY KEY (order_id, line_no),
        CONSTRAINT uq_line_product UNIQUE (order_id, region, sku),
        CONSTRAINT fk_lines_order FOREIGN KEY (order_id) REFERENCES orders (id)
          ON DELETE CASCADE ON UPDATE CASCADE,
        CONSTRAINT fk_lines_product FOREIGN KEY (region, sku) REFERENCES products (region, sku)
      );
      CREATE TABLE audit_log (at timestamptz, message text);
      CREATE VIEW customer_emails AS SELECT email FROM customers;
      INSERT INTO customers VALUES (1, 'a@x'), (2, 'b@x'), (3, 'c@x');
      ANALYZE customers;
    `);
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('lists base tables sorted by name, with keys and same-schema foreign keys', async () => {
    const connector = connectorFromUrl(db.url);
    try {
      const { tables } = await connector.introspect();
      expect(tables.map((table) => table.name)).toEqual([
        'audit_log',
        'customers',
        'order_lines',
        'orders',
        'products',
      ]);
      expect(tableNamed(tables, 'customers')).toMatchObject({
        primaryKey: ['id'],
        uniqueKeys: [['email']],
        foreignKeys: [],
        estimatedRows: 3,
      });
      // Never analyzed: PostgreSQL has no estimate yet.
      expect(tableNamed(tables, 'audit_log')).toMatchObject({
        primaryKey: [],
        uniqueKeys: [],
        foreignKeys: [],
        estimatedRows: null,
      });
      expect(tableNamed(tables, 'products').primaryKey).toEqual(['region', 'sku']);
      expect(tableNamed(tables, 'orders').foreignKeys).toEqual([
        {
          name: 'fk_orders_customer',
          columns: ['customer_id'],
          referencedTable: 'customers',
          referencedColumns: ['id'],
          onDelete: 'no action',
          onUpdate: 'no action',
        },
      ]);
      const lines = tableNamed(tables, 'order_lines');
      expect(lines.primaryKey).toEqual(['order_id', 'line_no']);
      expect(lines.uniqueKeys).toEqual([['order_id', 'region', 'sku']]);
      expect(lines.foreignKeys).toEqual([
        {
          name: 'fk_lines_order',
          columns: ['order_id'],
          referencedTable: 'orders',
          referencedColumns: ['id'],
          onDelete: 'cascade',
          onUpdate: 'cascade',
        },
        {
          name: 'fk_lines_product',
          columns: ['region', 'sku'],
          referencedTable: 'products',
          referencedColumns: ['region', 'sku'],
          onDelete: 'no action',
          onUpdate: 'no action',
        },
      ]);
    } finally {
      await connector.close();
    }
  });

  it('reads the schema named by ?schema=', async () => {
    const connector = connectorFromUrl(`${db.url}?schema=other`);
    try {
      const { tables } = await connector.introspect();
      expect(tables.map((table) => [table.name, table.primaryKey])).toEqual([['ext', ['id']]]);
      await db.exec("INSERT INTO other.ext VALUES (1, 'one')");
      const reader = await connector.openSnapshot();
      try {
        expect((await readAll(reader, tableNamed(tables, 'ext'))).flat()).toEqual([[1, 'one']]);
      } finally {
        await reader.close();
      }
    } finally {
      await connector.close();
    }
  });
});

describe('PostgresConnector snapshots', () => {
  let db: TestDatabase;
  let connector: SourceConnector;
  let big: SourceTable;
  let small: SourceTable;

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE big (id int PRIMARY KEY, label text NOT NULL);
      INSERT INTO big SELECT n, 'row ' || n FROM generate_series(1, 20000) AS n;
      CREATE TABLE small (id int PRIMARY KEY);
      INSERT INTO small VALUES (1), (2);
    `);
    connector = connectorFromUrl(db.url);
    const { tables } = await connector.introspect();
    big = tableNamed(tables, 'big');
    small = tableNamed(tables, 'small');
    // Closing drops the metadata pool, so every connection to the database from here on is a
    // snapshot's: the leak checks below count them from zero.
    await connector.close();
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  async function connectionsToDb(): Promise<number> {
    const [row] = await admin.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'replix'",
      [db.name],
    );
    return Number(row?.n);
  }

  it('streams 20,000 rows in 4 batches of 5,000, columns in request order', async () => {
    const reader = await connector.openSnapshot();
    try {
      const columns = [...big.columns].reverse();
      const sizes: number[] = [];
      const ids = new Set<unknown>();
      for await (const batch of reader.readTable({ table: 'big', columns, batchSize: 5000 })) {
        sizes.push(batch.length);
        for (const row of batch) ids.add(row[1]);
      }
      expect(sizes).toEqual([5000, 5000, 5000, 5000]);
      expect(ids.size).toBe(20_000);
      const [first] = (await readAll(reader, big, 'id = 7'))[0] ?? [];
      expect(first).toEqual([7, 'row 7']);
    } finally {
      await reader.close();
    }
  });

  it('filters with the where clause, in parentheses', async () => {
    const reader = await connector.openSnapshot();
    try {
      const batches = await readAll(reader, big, "id % 1000 = 0 OR label = 'row 7'");
      expect(batches.flat()).toHaveLength(21);
      expect(
        (await readAll(reader, big, 'id <= 3 -- a trailing comment'))
          .flat()
          .map((row) => row[0])
          .sort(),
      ).toEqual([1, 2, 3]);
    } finally {
      await reader.close();
    }
  });

  it('reports a bad where as a query error and keeps the snapshot usable', async () => {
    const reader = await connector.openSnapshot();
    try {
      const error = await rejection(readAll(reader, big, 'no_such_column = 1'));
      expect(error).toBeInstanceOf(SourceQueryError);
      expect(error.message).not.toContain('no_such_column');
      expect((error as SourceQueryError).driverCode).toBe('42703');
      expect((await readAll(reader, big, 'id = 1')).flat()).toHaveLength(1);
    } finally {
      await reader.close();
    }
  });

  it('sees the database as of openSnapshot, not rows committed later', async () => {
    const reader = await connector.openSnapshot();
    try {
      await db.exec('INSERT INTO small VALUES (3)');
      expect((await readAll(reader, small)).flat()).toEqual([[1], [2]]);
      expect((await readAll(reader, small)).flat()).toEqual([[1], [2]]);
    } finally {
      await reader.close();
    }
    const fresh = await connector.openSnapshot();
    try {
      expect((await readAll(fresh, small)).flat()).toEqual([[1], [2], [3]]);
    } finally {
      await fresh.close();
    }
  });

  it('abandons the rest of a table when the consumer stops early, keeping the snapshot', async () => {
    await expect.poll(connectionsToDb).toBe(0);
    const reader = await connector.openSnapshot();
    try {
      expect(await connectionsToDb()).toBe(1);
      for await (const batch of reader.readTable({ table: 'big', columns: big.columns })) {
        expect(batch).toHaveLength(5000);
        break;
      }
      expect((await readAll(reader, big, 'id <= 10')).flat()).toHaveLength(10);
      await reader.close();
      await reader.close();
      await expect.poll(connectionsToDb).toBe(0);
      expect((await rejection(readAll(reader, big))).code).toBe('snapshot_closed');
    } finally {
      await reader.close();
    }
  });

  it('refuses a second read while one is under way', async () => {
    const reader = await connector.openSnapshot();
    try {
      const first = reader.readTable({ table: 'big', columns: big.columns, batchSize: 10 });
      const iterator = first[Symbol.asyncIterator]();
      await iterator.next();
      expect((await rejection(readAll(reader, big))).code).toBe('snapshot_busy');
      await iterator.return?.();
      expect((await readAll(reader, big, 'id = 1')).flat()).toHaveLength(1);
    } finally {
      await reader.close();
    }
  });

  it('closes snapshots still open when the connector closes, even mid-read', async () => {
    const local = connectorFromUrl(db.url);
    try {
      await expect.poll(connectionsToDb).toBe(0);
      await local.openSnapshot();
      const reading = await local.openSnapshot();
      const iterator = reading
        .readTable({ table: 'big', columns: big.columns, batchSize: 10 })
        [Symbol.asyncIterator]();
      await iterator.next();
      expect(await connectionsToDb()).toBe(2);
      await local.close();
      await expect.poll(connectionsToDb).toBe(0);
      await iterator.return?.();
    } finally {
      await local.close();
    }
  });
});

describe('PostgresConnector connection errors', () => {
  const SECRET = 'wrong-S3cret-pw';
  let db: TestDatabase;
  let port: string;

  beforeAll(async () => {
    db = await admin.createDatabase('CREATE TABLE t (id int PRIMARY KEY)');
    port = new URL(db.url).port;
  });

  afterAll(async () => {
    await db?.drop();
  });

  // The test server trusts every local login, so a wrong password cannot fail here; an unknown
  // role is refused at the same authentication step.
  it('reports a refused login without the password', async () => {
    const connector = connectorFromUrl(
      `postgres://no_such_role:${SECRET}@127.0.0.1:${port}/${db.name}`,
    );
    try {
      // Each attempt starts only when awaited: a second one rejecting first would go unhandled.
      for (const attempt of [() => connector.introspect(), () => connector.openSnapshot()]) {
        const error = await rejection(attempt());
        expect(error).toBeInstanceOf(SourceConnectionError);
        expect(error.code).toBe('source_auth_failed');
        expect(error.message).toBe('Authentication to the source database failed.');
        expect(JSON.stringify({ ...error, message: error.message })).not.toContain(SECRET);
        expect(error.stack).not.toContain(SECRET);
      }
    } finally {
      await connector.close();
    }
  });

  it('reports a closed port as unreachable, without password or host in the message', async () => {
    const closed = await freePort();
    const connector = connectorFromUrl(`postgres://postgres:${SECRET}@127.0.0.1:${closed}/db`);
    try {
      // Each attempt starts only when awaited: a second one rejecting first would go unhandled.
      for (const attempt of [() => connector.introspect(), () => connector.openSnapshot()]) {
        const error = await rejection(attempt());
        expect(error.code).toBe('source_unreachable');
        expect(error.message).toBe('Could not connect to the source database (ECONNREFUSED).');
        expect(error).toMatchObject({ host: '127.0.0.1', port: closed, engine: 'postgres' });
      }
    } finally {
      await connector.close();
    }
  });

  it('reports a missing database', async () => {
    const connector = connectorFromUrl(`postgres://postgres@127.0.0.1:${port}/no_such_db_here`);
    try {
      expect((await rejection(connector.introspect())).code).toBe('source_database_not_found');
    } finally {
      await connector.close();
    }
  });
});
