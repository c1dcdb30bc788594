import type { TestDatabase } from '@replix/testkit';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import type { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import { connectorContract, readAll, tableNamed } from './connector-contract.ts';

const admin = testPostgres();

connectorContract({
  title: 'PostgresConnector',
  backend: 'postgres',
  enabled: true,
  createDatabase: (sql) => admin.createDatabase(sql),
  connectionsTo: async (db) => {
    const [row] = await admin.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'replix'",
      [db.name],
    );
    return Number(row?.n);
  },
  sql: {
    snapshotTables: `
      CREATE TABLE big (id int PRIMARY KEY, label text NOT NULL);
      INSERT INTO big SELECT n, 'row ' || n FROM generate_series(1, 20000) AS n;
      CREATE TABLE small (id int PRIMARY KEY);
      INSERT INTO small VALUES (1), (2);
    `,
    eventsTable: 'CREATE TABLE events (id int PRIMARY KEY)',
  },
  createKeysDatabase: () =>
    admin.createDatabase(`
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
    `),
  defaultForeignKeyRule: 'no action',
  // Never analyzed: PostgreSQL has no estimate yet.
  unanalysedEstimate: null,
  unknownColumnCode: '42703',
  earlyStopKeepsSnapshot: true,
  readsInKeyOrder: false,
  // The test server trusts every local login, so a wrong password cannot fail here; an unknown
  // role is refused at the same authentication step.
  refusedLoginUrl: async (db, password) => {
    const url = new URL(db.url);
    url.username = 'no_such_role';
    url.password = password;
    return url.toString();
  },
  followEvents: async () => ({ stop: async () => {} }),
  // The slot holding the history is gone.
  lostPosition: async (connector, _db, current) => {
    const { replicationName } = connector as PostgresConnector;
    await admin.query('SELECT pg_drop_replication_slot($1)', [replicationName]);
    return current;
  },
});

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

describe('PostgresConnector schemas', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE SCHEMA other;
      CREATE TABLE other.ext (id int PRIMARY KEY, note text);
      CREATE TABLE customers (id int PRIMARY KEY, email text NOT NULL UNIQUE);
    `);
  });

  afterAll(async () => {
    await db?.drop();
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
