import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';
import {
  type ContractDatabase,
  connectorContract,
  readAll,
  tableNamed,
} from './connector-contract.ts';

const admin = testMariaDb();

/** A contract database whose drop also drops the login made for it (see `refusedLoginUrl`). */
async function contractDatabase(sql: string): Promise<ContractDatabase> {
  const db = await admin.createDatabase(sql);
  return {
    name: db.name,
    url: db.url,
    exec: (statements) => db.exec(statements),
    drop: async () => {
      await admin.exec(`DROP USER IF EXISTS '${loginOf(db)}'@'%'`);
      await db.drop();
    },
  };
}

function loginOf(db: { readonly name: string }): string {
  return `u_${db.name.slice(-8)}`;
}

const LOGIN_PASSWORD = 'right-Pa55word';

/** Makes the database's login (password `LOGIN_PASSWORD`); its drop drops the login. */
async function createLogin(db: ContractDatabase): Promise<string> {
  const user = loginOf(db);
  await admin.exec(
    `CREATE USER '${user}'@'%' IDENTIFIED BY '${LOGIN_PASSWORD}'; GRANT ALL ON \`${db.name}\`.* TO '${user}'@'%'`,
  );
  return user;
}

connectorContract({
  title: 'MySqlConnector',
  backend: 'mysql',
  enabled: true,
  createDatabase: contractDatabase,
  connectionsTo: async (db) => {
    const [row] = await admin.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ?',
      [db.name],
    );
    return Number(row?.n);
  },
  sql: {
    snapshotTables: `
      CREATE TABLE big (id INT PRIMARY KEY, label VARCHAR(20) NOT NULL);
      INSERT INTO big SELECT seq, CONCAT('row ', seq) FROM seq_1_to_20000;
      CREATE TABLE small (id INT PRIMARY KEY);
      INSERT INTO small VALUES (1), (2);
    `,
    eventsTable: 'CREATE TABLE events (id INT PRIMARY KEY)',
  },
  createKeysDatabase: async () => {
    const other = await admin.createDatabase('CREATE TABLE ext (id INT PRIMARY KEY)');
    const db = await admin.createDatabase(`
      CREATE TABLE customers (
        id INT PRIMARY KEY,
        email VARCHAR(100) NOT NULL,
        UNIQUE KEY uq_email (email)
      );
      CREATE TABLE products (
        region CHAR(2) NOT NULL,
        sku VARCHAR(20) NOT NULL,
        name VARCHAR(50),
        PRIMARY KEY (region, sku)
      );
      CREATE TABLE orders (
        id BIGINT PRIMARY KEY,
        customer_id INT NOT NULL,
        ext_id INT,
        CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id),
        CONSTRAINT fk_orders_ext FOREIGN KEY (ext_id) REFERENCES \`${other.name}\`.ext (id)
      );
      CREATE TABLE order_lines (
        order_id BIGINT NOT NULL,
        line_no INT NOT NULL,
        sku VARCHAR(20) NOT NULL,
        region CHAR(2) NOT NULL,
        PRIMARY KEY (order_id, line_no),
        UNIQUE KEY uq_line_product (order_id, region, sku),
        UNIQUE KEY uq_prefix (sku(3), line_no),
        CONSTRAINT fk_lines_order FOREIGN KEY (order_id) REFERENCES orders (id)
          ON DELETE CASCADE ON UPDATE CASCADE,
        CONSTRAINT fk_lines_product FOREIGN KEY (region, sku) REFERENCES products (region, sku)
      );
      CREATE TABLE audit_log (at DATETIME, message TEXT);
      CREATE VIEW customer_emails AS SELECT email FROM customers;
      INSERT INTO customers VALUES (1, 'a@x'), (2, 'b@x'), (3, 'c@x');
      ANALYZE TABLE customers;
    `);
    return {
      name: db.name,
      url: db.url,
      exec: (statements) => db.exec(statements),
      drop: async () => {
        // MariaDB drops a database's tables one by one, parents before children, so the checks go.
        await admin.exec(`SET foreign_key_checks = 0; DROP DATABASE \`${db.name}\``);
        await other.drop();
      },
    };
  },
  defaultForeignKeyRule: 'restrict',
  unknownColumnCode: 'ER_BAD_FIELD_ERROR',
  earlyStopKeepsSnapshot: false,
  readsInKeyOrder: true,
  // A real user with a wrong password.
  refusedLoginUrl: async (db, password) => {
    const url = new URL(db.url);
    url.username = await createLogin(db);
    url.password = password;
    return url.toString();
  },
  followEvents: async () => ({ stop: async () => {} }),
  // A binlog file the server never had.
  lostPosition: async (_connector, _db, current) =>
    new BinlogPosition(`${(current as BinlogPosition).base}.999999`, 4),
});

const EVERY_TYPE_DDL = `
CREATE TABLE every_type (
  id INT PRIMARY KEY,
  c_tinyint TINYINT,
  c_smallint SMALLINT,
  c_mediumint MEDIUMINT,
  c_int INT,
  c_int_unsigned INT UNSIGNED,
  c_bigint BIGINT,
  c_bigint_unsigned BIGINT UNSIGNED,
  c_float FLOAT,
  c_double DOUBLE,
  c_decimal DECIMAL(30,10),
  c_tinyint1 TINYINT(1),
  c_bit1 BIT(1),
  c_boolean BOOLEAN,
  c_bit12 BIT(12),
  c_char CHAR(5),
  c_varchar VARCHAR(20) NOT NULL DEFAULT '',
  c_text TEXT,
  c_enum ENUM('small','large'),
  c_set SET('a','b','c'),
  c_json JSON,
  c_date DATE,
  c_datetime DATETIME(3),
  c_timestamp TIMESTAMP(6) NULL,
  c_time TIME,
  c_time3 TIME(3),
  c_binary BINARY(4),
  c_varbinary VARBINARY(10),
  c_blob BLOB,
  c_year YEAR,
  c_point POINT
);
-- TIMESTAMP values are read in the session time zone; the snapshot must deliver UTC whatever it.
SET time_zone = '+05:00';
SET sql_mode = '';
INSERT INTO every_type VALUES (
  1, -128, -32768, -8388608, -2147483648, 4294967295,
  -9223372036854775808, 18446744073709551615, 1.5, 1234567.891, '12345678901234567890.1234567891',
  1, b'1', FALSE, b'101010101010',
  'abc', 'héllo wörld ✓', 'a longer text', 'large', 'a,c', '{"a": [1, 2.50, "x"], "b": null}',
  '2024-02-29', '2024-02-29 23:59:59.123', '2024-03-01 04:59:59.123456', '-838:59:59', '100:00:00.250',
  X'DEADBEEF', X'0001', X'FF00FF', 2024, ST_GeomFromText('POINT(1 2)')
);
INSERT INTO every_type (id) VALUES (2);
INSERT INTO every_type (id, c_date, c_datetime, c_timestamp, c_time)
  VALUES (3, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '838:59:59');
`;

describe('MySqlConnector against MariaDB', () => {
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
      ['id', 'int', 'int(11)', false],
      ['c_tinyint', 'int', 'tinyint(4)', true],
      ['c_smallint', 'int', 'smallint(6)', true],
      ['c_mediumint', 'int', 'mediumint(9)', true],
      ['c_int', 'int', 'int(11)', true],
      ['c_int_unsigned', 'int', 'int(10) unsigned', true],
      ['c_bigint', 'bigint', 'bigint(20)', true],
      ['c_bigint_unsigned', 'bigint', 'bigint(20) unsigned', true],
      ['c_float', 'float', 'float', true],
      ['c_double', 'float', 'double', true],
      ['c_decimal', 'decimal', 'decimal(30,10)', true],
      ['c_tinyint1', 'boolean', 'tinyint(1)', true],
      ['c_bit1', 'boolean', 'bit(1)', true],
      ['c_boolean', 'boolean', 'tinyint(1)', true],
      ['c_bit12', 'bigint', 'bit(12)', true],
      ['c_char', 'string', 'char(5)', true],
      ['c_varchar', 'string', 'varchar(20)', false],
      ['c_text', 'string', 'text', true],
      ['c_enum', 'string', "enum('small','large')", true],
      ['c_set', 'string', "set('a','b','c')", true],
      ['c_json', 'json', 'json', true],
      ['c_date', 'date', 'date', true],
      ['c_datetime', 'timestamp', 'datetime(3)', true],
      ['c_timestamp', 'timestamp', 'timestamp(6)', true],
      ['c_time', 'time', 'time', true],
      ['c_time3', 'time', 'time(3)', true],
      ['c_binary', 'binary', 'binary(4)', true],
      ['c_varbinary', 'binary', 'varbinary(10)', true],
      ['c_blob', 'binary', 'blob', true],
      ['c_year', 'int', 'year(4)', true],
      ['c_point', 'string', 'point', true],
    ]);
    expect(table.columns.find((column) => column.name === 'c_decimal')?.scale).toBe(10);
    expect(table.columns.find((column) => column.name === 'c_int')).not.toHaveProperty('scale');
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
        -128,
        -32768,
        -8388608,
        -2147483648,
        4294967295,
        '-9223372036854775808',
        '18446744073709551615',
        1.5,
        1234567.891,
        '12345678901234567890.1234567891',
        true,
        true,
        false,
        '2730',
        'abc',
        'héllo wörld ✓',
        'a longer text',
        'large',
        'a,c',
        '{"a": [1, 2.50, "x"], "b": null}',
        '2024-02-29',
        Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000,
        Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000 + 456,
        -3_020_399,
        360_000.25,
        Buffer.from([0xde, 0xad, 0xbe, 0xef]),
        Buffer.from([0x00, 0x01]),
        Buffer.from([0xff, 0x00, 0xff]),
        2024,
        'POINT(1 2)',
      ]);
      for (const index of [26, 27, 28]) expect(rows[0]?.[index]).toBeInstanceOf(Uint8Array);
      expect(rows[1]).toEqual([
        2,
        ...Array.from({ length: 15 }, () => null),
        '',
        ...Array.from({ length: 14 }, () => null),
      ]);
      // Zero dates name no instant: null. TIME is a duration and may pass 24 hours.
      expect(rows[2]?.slice(21, 25)).toEqual([null, null, null, 3_020_399]);
    } finally {
      await reader.close();
    }
  });
});

describe('MySqlConnector logins', () => {
  const PASSWORD = LOGIN_PASSWORD;
  let db: ContractDatabase;
  let user: string;
  let port: string;

  beforeAll(async () => {
    db = await contractDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    user = await createLogin(db);
    port = new URL(db.url).port;
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('connects with the right password', async () => {
    const connector = connectorFromUrl(`mysql://${user}:${PASSWORD}@127.0.0.1:${port}/${db.name}`);
    try {
      expect((await connector.introspect()).tables.map((table) => table.name)).toEqual(['t']);
    } finally {
      await connector.close();
    }
  });
});
