import { describe, expect, it } from 'vitest';
import { testMariaDb, testPostgres } from '../src/vitest.ts';

describe('MariaDB test server', () => {
  const admin = testMariaDb();

  it('has the binary log on in ROW format with full row images', async () => {
    const rows = await admin.query<{ Variable_name: string; Value: string }>(
      "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin', 'binlog_format', 'binlog_row_image')",
    );
    const settings = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
    expect(settings).toEqual({ log_bin: 'ON', binlog_format: 'ROW', binlog_row_image: 'FULL' });
  });

  it('creates a database with its DDL and data, and drops it', async () => {
    const db = await admin.createDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    expect(db.url).toMatch(new RegExp(`^mysql://root@127\\.0\\.0\\.1:\\d+/${db.name}$`));
    expect(await db.query('SELECT name FROM t ORDER BY id')).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);
    await db.drop();
    const left = await admin.query('SHOW DATABASES LIKE ?', [db.name]);
    expect(left).toHaveLength(0);
  });
});

describe('PostgreSQL test server', () => {
  const admin = testPostgres();

  it('runs with wal_level logical and room for replication slots', async () => {
    const [wal] = await admin.query<{ wal_level: string }>('SHOW wal_level');
    const [slots] = await admin.query<{ max_replication_slots: string }>(
      'SHOW max_replication_slots',
    );
    expect(wal?.wal_level).toBe('logical');
    expect(Number(slots?.max_replication_slots)).toBeGreaterThanOrEqual(10);
  });

  it('creates a database with its DDL and data, and drops it', async () => {
    const db = await admin.createDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');",
    );
    expect(db.url).toMatch(new RegExp(`^postgres://postgres@127\\.0\\.0\\.1:\\d+/${db.name}$`));
    expect(await db.query('SELECT name FROM t ORDER BY id')).toEqual([
      { name: 'a' },
      { name: 'b' },
    ]);
    await db.drop();
    const left = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db.name]);
    expect(left).toHaveLength(0);
  });
});
