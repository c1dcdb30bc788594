import { randomBytes } from 'node:crypto';
import mssql, { type ConnectionPool } from 'mssql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { PositionExpiredError, SourceError, SourceQueryError } from '../src/errors.ts';
import type { MsSqlConnectorOptions } from '../src/mssql/mssql-connection-options.ts';
import { msSqlConfig } from '../src/mssql/mssql-connection-options.ts';
import type { MsSqlConnector } from '../src/mssql/mssql-connector.ts';
import { MsSqlLsn } from '../src/mssql/mssql-position.ts';
import type { MsSqlSnapshotReader } from '../src/mssql/mssql-snapshot.ts';
import { parseSourceUrl } from '../src/parse-source-url.ts';
import type { ChangeBatch, SourceChange } from '../src/replication.ts';
import {
  type ContractDatabase,
  connectorContract,
  readAll,
  tableNamed,
} from './connector-contract.ts';

/**
 * Integration tests against a real SQL Server. SQL Server cannot run where the rest of the
 * suite runs (the integration setup starts only MariaDB and PostgreSQL), so this file runs only
 * when MSSQL_URL names a server, e.g.
 *
 *   MSSQL_URL='mssql://sa:Secret123!@127.0.0.1:1433/master?trustServerCertificate=true'
 *
 * The login must be a sysadmin: the tests create and drop their own database, and enabling CDC
 * (sys.sp_cdc_enable_db) needs sysadmin. SQL Server Agent need not run: the CDC test drives the
 * capture itself with sys.sp_cdc_scan.
 */
const MSSQL_URL = process.env.MSSQL_URL;

const DATABASE = `replix_t_${randomBytes(4).toString('hex')}`;

let server: ConnectionPool;
let db: ConnectionPool;
let url: string;

async function exec(sql: string): Promise<void> {
  await db.request().batch(sql);
}

/** Runs the CDC capture once, as the Agent job would; fails harmlessly if the job is running. */
async function captureNow(): Promise<void> {
  try {
    await db
      .request()
      .batch('EXEC sys.sp_cdc_scan @maxtrans = 500, @maxscans = 1, @continuous = 0');
  } catch {
    // The capture job is scanning right now; it will capture the changes itself.
  }
}

const SETUP_SQL = `
CREATE TABLE dbo.customers (
  region char(2) NOT NULL,
  id int NOT NULL,
  email nvarchar(100) NOT NULL,
  CONSTRAINT PK_customers PRIMARY KEY (region, id),
  CONSTRAINT UQ_customers_email UNIQUE (email)
);
CREATE TABLE dbo.orders (
  id bigint NOT NULL CONSTRAINT PK_orders PRIMARY KEY,
  region char(2) NOT NULL,
  customer_id int NOT NULL,
  total decimal(12,2) NOT NULL,
  note nvarchar(max) NULL,
  CONSTRAINT FK_orders_customer FOREIGN KEY (region, customer_id)
    REFERENCES dbo.customers (region, id)
);
CREATE TABLE dbo.every_type (
  id int NOT NULL PRIMARY KEY,
  c_tinyint tinyint, c_smallint smallint, c_int int, c_bigint bigint,
  c_real real, c_float float,
  c_decimal decimal(38,10), c_numeric numeric(5,0), c_money money, c_smallmoney smallmoney,
  c_bit bit,
  c_char char(3), c_varchar varchar(20), c_nchar nchar(2), c_nvarchar nvarchar(40),
  c_text text, c_ntext ntext,
  c_uniqueidentifier uniqueidentifier, c_xml xml, c_sql_variant sql_variant,
  c_hierarchyid hierarchyid, c_json nvarchar(max),
  c_date date, c_datetime datetime, c_datetime2 datetime2(7), c_smalldatetime smalldatetime,
  c_datetimeoffset datetimeoffset(7), c_time time(7),
  c_binary binary(4), c_varbinary varbinary(10), c_image image, c_rowversion rowversion
);
INSERT INTO dbo.every_type (id, c_tinyint, c_smallint, c_int, c_bigint, c_real, c_float,
  c_decimal, c_numeric, c_money, c_smallmoney, c_bit, c_char, c_varchar, c_nchar, c_nvarchar,
  c_text, c_ntext, c_uniqueidentifier, c_xml, c_sql_variant, c_hierarchyid, c_json, c_date,
  c_datetime, c_datetime2, c_smalldatetime, c_datetimeoffset, c_time, c_binary, c_varbinary,
  c_image)
VALUES (1, 255, -32768, 2147483647, 9223372036854775807, 0.5, 1.25,
  12345678901234567890.1234567890, 99999, 922337203685477.5807, -214748.3648, 1, 'abc', 'hello',
  N'ñ', N'ünïcödé ✓', 'plain text', N'ntext ✓', '6F9619FF-8B86-D011-B42D-00C04FC964FF',
  '<a>1</a>', CAST(42 AS int), hierarchyid::Parse('/1/2/'), N'{"a":[1,2.50]}', '2024-02-29',
  '2024-02-29 23:59:59.997', '2024-02-29 23:59:59.1234567', '2024-02-29 23:59',
  '2024-03-10 12:30:00.1234567 +02:00', '12:34:56.1234567', 0x00010203, 0x0A0B, 0xFF);
INSERT INTO dbo.every_type (id) VALUES (2);
`;

/** The server MSSQL_URL names, with a pool per contract database. */
const contractServer = {
  options: undefined as MsSqlConnectorOptions | undefined,
  server: undefined as Promise<ConnectionPool> | undefined,
  databases: new Map<string, ConnectionPool>(),
};

const POOL_SHAPE = { maxConnections: 2, requestTimeout: 60_000 };

function serverPool(): Promise<ConnectionPool> {
  if (contractServer.server === undefined) {
    const source = parseSourceUrl(MSSQL_URL!);
    if (source.backend !== 'mssql') throw new Error('MSSQL_URL must be an mssql:// URL');
    contractServer.options = source.options;
    contractServer.server = new mssql.ConnectionPool(
      msSqlConfig(source.options, POOL_SHAPE),
    ).connect();
  }
  return contractServer.server;
}

/** Runs a script whose batches are separated by GO lines (CREATE VIEW must start a batch). */
async function runScript(pool: ConnectionPool, sql: string): Promise<void> {
  for (const batch of sql.split(/^\s*GO\s*$/m)) {
    if (batch.trim() !== '') await pool.request().batch(batch);
  }
}

async function contractDatabase(sql: string): Promise<ContractDatabase> {
  const server = await serverPool();
  const name = `replix_t_${randomBytes(4).toString('hex')}`;
  await server.request().batch(`CREATE DATABASE [${name}]`);
  await server.request().batch(`ALTER DATABASE [${name}] SET ALLOW_SNAPSHOT_ISOLATION ON`);
  const pool = await new mssql.ConnectionPool(
    msSqlConfig({ ...contractServer.options!, database: name }, POOL_SHAPE),
  ).connect();
  contractServer.databases.set(name, pool);
  await runScript(pool, sql);
  const testUrl = new URL(MSSQL_URL!);
  testUrl.pathname = `/${name}`;
  return {
    name,
    url: testUrl.toString(),
    exec: (statements) => runScript(pool, statements),
    drop: async () => {
      try {
        await pool
          .request()
          .batch(
            'IF (SELECT is_cdc_enabled FROM sys.databases WHERE name = DB_NAME()) = 1 EXEC sys.sp_cdc_disable_db',
          );
      } catch {
        // Not enabled, or the database is already unusable: dropping it is all that is left.
      }
      contractServer.databases.delete(name);
      await pool.close();
      await server
        .request()
        .batch(
          `ALTER DATABASE [${name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [${name}]`,
        );
    },
  };
}

/** Runs the CDC capture once in `pool`'s database, as the Agent job would. */
async function scanOnce(pool: ConnectionPool): Promise<void> {
  try {
    await pool
      .request()
      .batch('EXEC sys.sp_cdc_scan @maxtrans = 500, @maxscans = 1, @continuous = 0');
  } catch {
    // The capture job is scanning right now; it will capture the changes itself.
  }
}

connectorContract({
  title: 'MsSqlConnector',
  backend: 'mssql',
  enabled: Boolean(MSSQL_URL),
  createDatabase: contractDatabase,
  connectionsTo: async (db) => {
    const request = (await serverPool()).request();
    request.input('name', mssql.NVarChar, db.name);
    const result = await request.query(
      "SELECT COUNT(*) AS n FROM sys.dm_exec_sessions WHERE database_id = DB_ID(@name) AND program_name = 'replix'",
    );
    return Number(result.recordset[0]?.n);
  },
  sql: {
    snapshotTables: `
      CREATE TABLE big (id int PRIMARY KEY, label varchar(20) NOT NULL);
      INSERT INTO big SELECT n, CONCAT('row ', n) FROM (
        SELECT TOP (20000) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n
        FROM sys.all_objects a CROSS JOIN sys.all_objects b
      ) AS numbers;
      CREATE TABLE small (id int PRIMARY KEY);
      INSERT INTO small VALUES (1), (2);
    `,
    eventsTable: 'CREATE TABLE events (id int PRIMARY KEY)',
  },
  createKeysDatabase: () =>
    contractDatabase(`
      CREATE SCHEMA other
      GO
      CREATE TABLE other.ext (id int PRIMARY KEY, note nvarchar(100));
      CREATE TABLE customers (
        id int PRIMARY KEY,
        email nvarchar(100) NOT NULL CONSTRAINT uq_email UNIQUE
      );
      CREATE TABLE products (
        region char(2) NOT NULL,
        sku nvarchar(20) NOT NULL,
        name nvarchar(50),
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
        sku nvarchar(20) NOT NULL,
        region char(2) NOT NULL,
        PRIMARY KEY (order_id, line_no),
        CONSTRAINT uq_line_product UNIQUE (order_id, region, sku),
        CONSTRAINT fk_lines_order FOREIGN KEY (order_id) REFERENCES orders (id)
          ON DELETE CASCADE ON UPDATE CASCADE,
        CONSTRAINT fk_lines_product FOREIGN KEY (region, sku) REFERENCES products (region, sku)
      );
      CREATE TABLE audit_log (at datetime2, message nvarchar(max));
      GO
      CREATE VIEW customer_emails AS SELECT email FROM customers
      GO
      INSERT INTO customers VALUES (1, N'a@x'), (2, N'b@x'), (3, N'c@x');
      UPDATE STATISTICS customers;
    `),
  // SQL Server's introspection reports no ON DELETE / ON UPDATE rules.
  defaultForeignKeyRule: undefined,
  unknownColumnCode: '207',
  earlyStopKeepsSnapshot: true,
  readsInKeyOrder: false,
  refusedLoginUrl: async (db, password) => {
    const url = new URL(db.url);
    url.username = 'no_such_login';
    url.password = password;
    return url.toString();
  },
  // CDC on the database and on `events`, and a capture scan every second, as the Agent would.
  // A first scan of another table records a position, without which no snapshot has one.
  followEvents: async (db) => {
    const pool = contractServer.databases.get(db.name)!;
    await runScript(
      pool,
      `EXEC sys.sp_cdc_enable_db;
      CREATE TABLE capture_seed (id int PRIMARY KEY);
      EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'events', @role_name = NULL;
      EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'capture_seed', @role_name = NULL;
      INSERT INTO capture_seed VALUES (1);`,
    );
    for (let i = 0; i < 20; i++) {
      await scanOnce(pool);
      const [row] = (await pool.request().query('SELECT sys.fn_cdc_get_max_lsn() AS lsn'))
        .recordset;
      if (row?.lsn) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const scanner = setInterval(() => void scanOnce(pool), 1000);
    return { stop: async () => clearInterval(scanner) };
  },
  lostPosition: async () => MsSqlLsn.parse('00000000000000000001'),
});

afterAll(async () => {
  await (await contractServer.server)?.close();
});

describe.skipIf(!MSSQL_URL)('MsSqlConnector against SQL Server (MSSQL_URL)', () => {
  beforeAll(async () => {
    const source = parseSourceUrl(MSSQL_URL!);
    if (source.backend !== 'mssql') throw new Error('MSSQL_URL must be an mssql:// URL');
    const shape = { maxConnections: 2, requestTimeout: 60_000 };
    server = await new mssql.ConnectionPool(msSqlConfig(source.options, shape)).connect();
    await server.request().batch(`CREATE DATABASE [${DATABASE}]`);
    await server.request().batch(`ALTER DATABASE [${DATABASE}] SET ALLOW_SNAPSHOT_ISOLATION ON`);
    db = await new mssql.ConnectionPool(
      msSqlConfig({ ...source.options, database: DATABASE }, shape),
    ).connect();
    await exec(SETUP_SQL);
    await exec(`
      INSERT INTO dbo.customers VALUES ('eu', 1, N'a@example.com'), ('us', 1, N'b@example.com');
      INSERT INTO dbo.orders (id, region, customer_id, total)
        SELECT n, 'eu', 1, n * 1.5 FROM (
          SELECT TOP (2500) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) AS n
          FROM sys.all_objects a CROSS JOIN sys.all_objects b
        ) AS numbers;
      UPDATE STATISTICS dbo.orders;`);
    const testUrl = new URL(MSSQL_URL!);
    testUrl.pathname = `/${DATABASE}`;
    url = testUrl.toString();
  }, 120_000);

  afterAll(async () => {
    try {
      await exec(
        'IF (SELECT is_cdc_enabled FROM sys.databases WHERE name = DB_NAME()) = 1 EXEC sys.sp_cdc_disable_db',
      );
    } catch {
      // Not enabled, or the database is already unusable: dropping it is all that is left.
    }
    await db?.close();
    await server
      ?.request()
      .batch(
        `ALTER DATABASE [${DATABASE}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [${DATABASE}]`,
      );
    await server?.close();
  }, 120_000);

  it('introspects tables, columns, composite keys and foreign keys', async () => {
    const connector = connectorFromUrl(url);
    try {
      const schema = await connector.introspect();
      expect(schema.tables.map((table) => table.name)).toEqual([
        'customers',
        'every_type',
        'orders',
      ]);
      const customers = tableNamed(schema.tables, 'customers');
      expect(customers.primaryKey).toEqual(['region', 'id']);
      expect(customers.uniqueKeys).toEqual([['email']]);
      expect(customers.columns).toEqual([
        { name: 'region', type: 'string', nullable: false, sourceType: 'char(2)' },
        { name: 'id', type: 'int', nullable: false, sourceType: 'int' },
        { name: 'email', type: 'string', nullable: false, sourceType: 'nvarchar(100)' },
      ]);
      const orders = tableNamed(schema.tables, 'orders');
      expect(orders.foreignKeys).toEqual([
        {
          name: 'FK_orders_customer',
          columns: ['region', 'customer_id'],
          referencedTable: 'customers',
          referencedColumns: ['region', 'id'],
        },
      ]);
      expect(orders.columns.find((c) => c.name === 'total')).toEqual({
        name: 'total',
        type: 'decimal',
        nullable: false,
        sourceType: 'decimal(12,2)',
        scale: 2,
      });
      expect(orders.estimatedRows).toBe(2500);
      const types = tableNamed(schema.tables, 'every_type').columns.map((c) => [
        c.name,
        c.sourceType,
        c.type,
      ]);
      expect(types).toContainEqual(['c_datetime2', 'datetime2(7)', 'timestamp']);
      expect(types).toContainEqual(['c_nvarchar', 'nvarchar(40)', 'string']);
      expect(types).toContainEqual(['c_money', 'money', 'decimal']);
      expect(types).toContainEqual(['c_rowversion', 'timestamp', 'binary']);
      expect(types).toContainEqual(['c_hierarchyid', 'hierarchyid', 'string']);
    } finally {
      await connector.close();
    }
  });

  it('opens a snapshot no other session joins, as it says', async () => {
    const connector = connectorFromUrl(url);
    try {
      expect(connector.snapshotShareable).toBe(false);
      const reader = await connector.openSnapshot({ joiners: 2, reads: ['every_type'] });
      expect(reader.share).toBeNull();
      await reader.joined();
      await reader.close();
    } finally {
      await connector.close();
    }
  });

  it('delivers every type in its canonical form', async () => {
    const connector = connectorFromUrl(url);
    try {
      const table = tableNamed((await connector.introspect()).tables, 'every_type');
      const reader = await connector.openSnapshot();
      const [rows] = await readAll(reader, table);
      await reader.close();
      const byName = (row: unknown[]) =>
        Object.fromEntries(table.columns.map((column, i) => [column.name, row[i]]));
      const full = byName(rows![0]!);
      expect(full).toMatchObject({
        c_tinyint: 255,
        c_smallint: -32768,
        c_int: 2147483647,
        c_bigint: '9223372036854775807',
        c_real: 0.5,
        c_float: 1.25,
        c_decimal: '12345678901234567890.1234567890',
        c_numeric: '99999',
        c_money: '922337203685477.5807',
        c_smallmoney: '-214748.3648',
        c_bit: true,
        c_char: 'abc',
        c_varchar: 'hello',
        c_nchar: 'ñ ',
        c_nvarchar: 'ünïcödé ✓',
        c_text: 'plain text',
        c_ntext: 'ntext ✓',
        c_uniqueidentifier: '6F9619FF-8B86-D011-B42D-00C04FC964FF',
        c_xml: '<a>1</a>',
        c_sql_variant: '42',
        c_hierarchyid: '/1/2/',
        c_json: '{"a":[1,2.50]}',
        c_date: '2024-02-29',
        c_datetime: Date.UTC(2024, 1, 29, 23, 59, 59, 997) * 1000,
        c_datetime2: Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000 + 456,
        c_smalldatetime: Date.UTC(2024, 1, 29, 23, 59) * 1000,
        c_datetimeoffset: Date.UTC(2024, 2, 10, 10, 30, 0, 123) * 1000 + 456,
        c_time: 45296.123456,
      });
      expect(full.c_binary).toEqual(Buffer.from([0, 1, 2, 3]));
      expect(full.c_varbinary).toEqual(Buffer.from([10, 11]));
      expect(full.c_image).toEqual(Buffer.from([255]));
      expect(full.c_rowversion).toBeInstanceOf(Uint8Array);
      expect((full.c_rowversion as Uint8Array).length).toBe(8);
      const empty = byName(rows![1]!);
      for (const [name, value] of Object.entries(empty)) {
        if (name !== 'id' && name !== 'c_rowversion') expect(value, name).toBeNull();
      }
    } finally {
      await connector.close();
    }
  });

  it('streams in batches from one consistent snapshot, and survives an early stop and a bad where', async () => {
    const connector = connectorFromUrl(url);
    try {
      const schema = await connector.introspect();
      const orders = tableNamed(schema.tables, 'orders');
      const reader = (await connector.openSnapshot()) as MsSqlSnapshotReader;
      expect(reader.isolation).toBe('snapshot');
      expect(reader.position).toBeNull();
      // The snapshot is fixed by its first read; writes after it stay invisible.
      const first = await readAll(reader, tableNamed(schema.tables, 'customers'));
      await exec("INSERT INTO dbo.customers VALUES ('eu', 2, N'c@example.com')");
      expect((await readAll(reader, tableNamed(schema.tables, 'customers'))).flat()).toHaveLength(
        first.flat().length,
      );

      const sizes = (await readAll(reader, orders, undefined, 1000)).map((batch) => batch.length);
      expect(sizes).toEqual([1000, 1000, 500]);

      // Stopping after one batch cancels the query; the snapshot serves the next read.
      for await (const batch of reader.readTable({
        table: 'orders',
        columns: orders.columns,
        batchSize: 10,
      })) {
        expect(batch).toHaveLength(10);
        break;
      }
      const failed = reader.readTable({
        table: 'orders',
        columns: orders.columns,
        where: 'no_such_column = 1',
      });
      await expect(failed.next()).rejects.toBeInstanceOf(SourceQueryError);
      expect((await readAll(reader, orders)).flat()).toHaveLength(2500);
      await reader.close();
      await reader.close();
      await expect(readAll(reader, orders)).rejects.toMatchObject({ code: 'snapshot_closed' });
    } finally {
      await exec("DELETE FROM dbo.customers WHERE region = 'eu' AND id = 2");
      await connector.close();
    }
  });

  it('reads current rows by composite key and by change column', async () => {
    const connector = connectorFromUrl(url) as MsSqlConnector;
    try {
      const schema = await connector.introspect();
      const customers = tableNamed(schema.tables, 'customers');
      const byKey = await connector.readRows({
        table: 'customers',
        columns: customers.columns,
        keyColumns: customers.primaryKey,
        keys: [
          ['us', 1],
          ['eu', 1],
          ['eu', 404],
        ],
      });
      expect(byKey.sort()).toEqual([
        ['eu', 1, 'a@example.com'],
        ['us', 1, 'b@example.com'],
      ]);
      const orders = tableNamed(schema.tables, 'orders');
      const after = await connector.readRows({
        table: 'orders',
        columns: orders.columns,
        keyColumns: [],
        keys: null,
        after: { column: 'id', value: '2498' },
      });
      expect(after.map((row) => row[0]).sort()).toEqual(['2499', '2500']);
    } finally {
      await connector.close();
    }
  });

  describe('change data capture', () => {
    beforeAll(async () => {
      await exec('EXEC sys.sp_cdc_enable_db');
      await exec(
        "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'customers', @role_name = NULL",
      );
      await exec(
        "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'orders', @role_name = NULL",
      );
      // A first scan records a position, without which no snapshot has one.
      await exec("INSERT INTO dbo.customers VALUES ('us', 9, N'seed@example.com')");
      for (let i = 0; i < 20; i++) {
        await captureNow();
        const [row] = (await db.request().query('SELECT sys.fn_cdc_get_max_lsn() AS lsn'))
          .recordset;
        if (row?.lsn) break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }, 120_000);

    it('reports readiness with its facts', async () => {
      const connector = connectorFromUrl(url);
      try {
        const readiness = await connector.checkReplication();
        expect(readiness.facts).toMatchObject({
          cdcEnabled: true,
          capturedTables: 2,
          snapshotIsolation: true,
        });
        // every_type has no capture instance.
        expect(readiness.issues).toContainEqual(expect.stringContaining('[dbo].[every_type]'));
        expect(readiness.ready).toBe(false);
      } finally {
        await connector.close();
      }
    });

    it('streams committed changes from a snapshot position, grouped by transaction', async () => {
      const connector = connectorFromUrl(url) as MsSqlConnector;
      const controller = new AbortController();
      const scanner = setInterval(() => void captureNow(), 1000);
      try {
        const schema = await connector.introspect();
        const customers = tableNamed(schema.tables, 'customers');
        const orders = tableNamed(schema.tables, 'orders');
        const reader = await connector.openSnapshot({ withPosition: true });
        const position = reader.position!;
        expect(position).toBeInstanceOf(MsSqlLsn);
        expect(connector.positionFromString(position.serialize()).compare(position)).toBe(0);
        await reader.close();

        await exec(`
          BEGIN TRANSACTION;
          INSERT INTO dbo.customers VALUES ('eu', 3, N'new@example.com');
          INSERT INTO dbo.orders (id, region, customer_id, total) VALUES (9001, 'eu', 3, 10.25);
          COMMIT;
          UPDATE dbo.orders SET total = 11.50, note = N'changed' WHERE id = 9001;
          DELETE FROM dbo.orders WHERE id = 9001;`);

        const batches: ChangeBatch[] = [];
        const changes = (): SourceChange[] => batches.flatMap((batch) => batch.changes);
        const timeout = setTimeout(() => controller.abort(), 45_000);
        for await (const batch of connector.streamChanges({
          tables: [
            { table: 'customers', columns: customers.columns },
            { table: 'orders', columns: orders.columns },
          ],
          from: position,
          signal: controller.signal,
        })) {
          batches.push(batch);
          if (changes().some((change) => change.op === 'delete')) controller.abort();
        }
        clearTimeout(timeout);

        // The seed row may come again: the position may predate its capture (see snapshotPosition).
        const seen = changes().filter(
          (change) => !JSON.stringify(change).includes('seed@example.com'),
        );
        expect(seen).toEqual([
          { op: 'insert', table: 'customers', row: ['eu', 3, 'new@example.com'] },
          { op: 'insert', table: 'orders', row: ['9001', 'eu', 3, '10.25', null] },
          {
            op: 'update',
            table: 'orders',
            // CDC leaves nvarchar(max) NULL in a before-image unless the update changed it, so
            // a NULL there says nothing: it is delivered as undefined.
            before: ['9001', 'eu', 3, '10.25', undefined],
            after: ['9001', 'eu', 3, '11.50', 'changed'],
          },
          { op: 'delete', table: 'orders', row: ['9001', 'eu', 3, '11.50', 'changed'] },
        ]);
        // Positions only move forward, and the batch with both inserts holds the whole transaction.
        for (let i = 1; i < batches.length; i++) {
          expect(batches[i]!.position.compare(batches[i - 1]!.position)).toBeGreaterThanOrEqual(0);
        }
        const newRows = (batch: ChangeBatch) =>
          batch.changes.filter((c) => c.op === 'insert' && !JSON.stringify(c).includes('seed@'));
        const withInserts = batches.find((batch) => newRows(batch).length > 0);
        expect(newRows(withInserts!)).toHaveLength(2);
        expect(batches.at(-1)!.position.compare(position)).toBeGreaterThan(0);
      } finally {
        clearInterval(scanner);
        controller.abort();
        await connector.close();
      }
    });

    it('fails with PositionExpiredError for a position older than the history', async () => {
      const connector = connectorFromUrl(url);
      try {
        const schema = await connector.introspect();
        const stream = connector.streamChanges({
          tables: [{ table: 'orders', columns: tableNamed(schema.tables, 'orders').columns }],
          from: MsSqlLsn.parse('00000000000000000001'),
          signal: new AbortController().signal,
        });
        const error = await stream[Symbol.asyncIterator]()
          .next()
          .then(
            () => undefined,
            (reason: unknown) => reason,
          );
        expect(error).toBeInstanceOf(PositionExpiredError);
      } finally {
        await connector.close();
      }
    });

    it('refuses a table without a capture instance as not ready', async () => {
      const connector = connectorFromUrl(url);
      const controller = new AbortController();
      try {
        const schema = await connector.introspect();
        const reader = await connector.openSnapshot({ withPosition: true });
        const from = reader.position!;
        await reader.close();
        const stream = connector.streamChanges({
          tables: [
            { table: 'every_type', columns: tableNamed(schema.tables, 'every_type').columns },
          ],
          from,
          signal: controller.signal,
        });
        const error = await stream[Symbol.asyncIterator]()
          .next()
          .then(
            () => undefined,
            (reason: unknown) => reason,
          );
        expect(error).toBeInstanceOf(SourceError);
        expect(error).toMatchObject({ code: 'replication_not_ready' });
      } finally {
        controller.abort();
        await connector.close();
      }
    });
  });
});
