import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MySqlConnector } from '../src/mysql/mysql-connector.ts';
import { parseTimestampText } from '../src/temporal-text.ts';
import {
  changesOf,
  Follower,
  mySqlConnector,
  positionNow,
  readRows,
  tableNamed,
} from './mysql-cdc-helpers.ts';

const admin = testMariaDb();

/** Each column with two values (SQL literals): rows hold one, then the other, then NULL. */
const COLUMNS: [name: string, type: string, a: string, b: string][] = [
  ['c_tinyint', 'TINYINT', '-128', '127'],
  ['c_smallint', 'SMALLINT', '-32768', '32767'],
  ['c_mediumint', 'MEDIUMINT', '-8388608', '8388607'],
  ['c_mediumint_u', 'MEDIUMINT UNSIGNED', '16777215', '0'],
  ['c_int', 'INT', '-2147483648', '2147483647'],
  ['c_int_unsigned', 'INT UNSIGNED', '4294967295', '0'],
  ['c_bigint', 'BIGINT', '-9223372036854775808', '9007199254740993'],
  ['c_bigint_unsigned', 'BIGINT UNSIGNED', '18446744073709551615', '9223372036854775808'],
  ['c_float', 'FLOAT', '1.5', '16777217'],
  ['c_float_pi', 'FLOAT', '3.14159265', '-1e-7'],
  ['c_float_md', 'FLOAT(10,4)', '12345.6789', '-0.0001'],
  ['c_double', 'DOUBLE', '1234567.891', '0.1'],
  ['c_double_big', 'DOUBLE', '1e300', '-2.2250738585072014e-308'],
  ['c_double_md', 'DOUBLE(12,3)', '-123456789.125', '0.001'],
  ['c_decimal', 'DECIMAL(30,10)', "'12345678901234567890.1234567891'", "'-0.0000000001'"],
  ['c_decimal_0', 'DECIMAL(20,0)', "'-99999999999999999999'", '0'],
  ['c_decimal_frac', 'DECIMAL(10,10)', "'0.9999999999'", "'-0.5'"],
  ['c_tinyint1', 'TINYINT(1)', '1', '0'],
  ['c_bit1', 'BIT(1)', "b'1'", "b'0'"],
  ['c_boolean', 'BOOLEAN', 'FALSE', 'TRUE'],
  ['c_bit12', 'BIT(12)', "b'101010101010'", "b'0'"],
  [
    'c_bit64',
    'BIT(64)',
    "b'1111111111111111111111111111111111111111111111111111111111111111'",
    "b'1'",
  ],
  ['c_char', 'CHAR(5)', "'abc'", "''"],
  ['c_varchar', "VARCHAR(20) NOT NULL DEFAULT ''", "'héllo wörld ✓'", "'x'"],
  ['c_text', 'TEXT', "'a longer text'", "''"],
  ['c_tinytext_latin1', 'TINYTEXT CHARACTER SET latin1', "'café €'", "'zz'"],
  ['c_enum', "ENUM('small','large')", "'large'", "'small'"],
  ['c_enum_odd', "ENUM('a,b','it''s','back\\\\slash')", "'a,b'", "'it''s'"],
  ['c_set', "SET('a','b','c')", "'a,c'", "''"],
  ['c_json', 'JSON', '\'{"a": [1, 2.50, "x"], "b": null}\'', "'[]'"],
  ['c_date', 'DATE', "'2024-02-29'", "'0000-00-00'"],
  ['c_date_old', 'DATE', "'1000-01-01'", "'9999-12-31'"],
  ['c_datetime', 'DATETIME(3)', "'2024-02-29 23:59:59.123'", "'0000-00-00 00:00:00'"],
  ['c_datetime6', 'DATETIME(6)', "'9999-12-31 23:59:59.999999'", "'1000-01-01 00:00:00.000001'"],
  ['c_datetime0', 'DATETIME', "'1970-01-01 00:00:00'", "'2024-00-10 10:00:00'"],
  ['c_timestamp', 'TIMESTAMP(6) NULL', "'2024-03-01 04:59:59.123456'", "'0000-00-00 00:00:00'"],
  ['c_timestamp0', 'TIMESTAMP NULL', "'2038-01-19 08:14:07'", "'1970-01-01 05:00:01'"],
  ['c_timestamp1', 'TIMESTAMP(1) NULL', "'2001-02-03 04:05:06.7'", "'2001-02-03 04:05:06.0'"],
  ['c_time', 'TIME', "'-838:59:59'", "'-01:00:00'"],
  ['c_time3', 'TIME(3)', "'100:00:00.250'", "'-00:00:01.250'"],
  ['c_time6', 'TIME(6)', "'-00:00:00.000001'", "'838:59:59.000000'"],
  ['c_time1', 'TIME(1)', "'-00:01:00.5'", "'12:34:56.7'"],
  ['c_time4', 'TIME(4)', "'-10:00:00.0001'", "'00:00:00'"],
  ['c_binary', 'BINARY(4)', "X'DEADBEEF'", "X'01'"],
  ['c_varbinary', 'VARBINARY(10)', "X'0001'", "X''"],
  ['c_blob', 'BLOB', "X'FF00FF'", "X''"],
  ['c_year', 'YEAR', '2024', '0'],
  ['c_point', 'POINT', 'POINT(1, 2)', 'POINT(-1e-10, 123456789.123456789)'],
  [
    'c_geometry',
    'GEOMETRY',
    "ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((5 5,6 5,6 6,5 5)))')",
    "ST_GeomFromText('GEOMETRYCOLLECTION(POINT(0.1 0.2),LINESTRING(0 0,1.5 2.25),MULTIPOINT(1 1,2 2))')",
  ],
  ['c_linestring', 'LINESTRING', "ST_GeomFromText('LINESTRING(0 0,1e15 -1e-16)')", 'NULL'],
];

const DDL = `CREATE TABLE every_type (id INT PRIMARY KEY, ${COLUMNS.map(
  ([name, type]) => `${name} ${type}`,
).join(', ')})`;

/** Literals of one row: `a`, `b` or NULL (the NOT NULL varchar gets ''). */
function literals(which: 'a' | 'b' | 'null'): string[] {
  return COLUMNS.map(([name, , a, b]) => {
    if (which === 'a') return a;
    if (which === 'b') return b;
    return name === 'c_varchar' ? "''" : 'NULL';
  });
}

function insertSql(id: number, which: 'a' | 'b' | 'null'): string {
  return `INSERT INTO every_type VALUES (${id}, ${literals(which).join(', ')})`;
}

function updateSql(id: number, which: 'a' | 'b' | 'null'): string {
  const values = literals(which);
  const assignments = COLUMNS.map(([name], index) => `${name} = ${values[index]}`);
  return `UPDATE every_type SET ${assignments.join(', ')} WHERE id = ${id}`;
}

// TIMESTAMP values are given in +05:00; both readers must deliver UTC. Zero dates need a lax
// sql_mode.
const SESSION = "SET time_zone = '+05:00'; SET sql_mode = '';";

const byId = (a: readonly unknown[], b: readonly unknown[]) => Number(a[0]) - Number(b[0]);

describe('MySQL change stream values', () => {
  let db: TestDatabase;
  let connector: MySqlConnector;
  let table: SourceTable;

  beforeAll(async () => {
    db = await admin.createDatabase(DDL);
    connector = mySqlConnector(db);
    table = tableNamed((await connector.introspect()).tables, 'every_type');
  });

  afterAll(async () => {
    await connector?.close();
    await db?.drop();
  });

  async function snapshotRows(): Promise<unknown[][]> {
    const reader = await connector.openSnapshot();
    try {
      return (await readRows(reader, table)).sort(byId);
    } finally {
      await reader.close();
    }
  }

  it('delivers every column type exactly as the snapshot does: insert, update, delete', async () => {
    const follower = new Follower(connector, [table], await positionNow(connector));
    try {
      await db.exec(
        `${SESSION} ${insertSql(1, 'a')}; ${insertSql(2, 'null')}; ${insertSql(3, 'b')}`,
      );
      const inserted = await snapshotRows();
      const inserts = changesOf(await follower.until((c) => c.length >= 3), 'insert');
      expect(inserts.map((change) => change.row).sort(byId)).toEqual(inserted);

      await db.exec(
        `${SESSION} ${updateSql(1, 'b')}; ${updateSql(2, 'a')}; ${updateSql(3, 'null')}`,
      );
      const updated = await snapshotRows();
      const updates = changesOf(await follower.until((c) => c.length >= 6), 'update');
      expect(updates.map((change) => change.before ?? []).sort(byId)).toEqual(inserted);
      expect(updates.map((change) => change.after).sort(byId)).toEqual(updated);

      await db.exec('DELETE FROM every_type');
      const deletes = changesOf(await follower.until((c) => c.length >= 9), 'delete');
      expect(deletes.map((change) => change.row).sort(byId)).toEqual(updated);

      // The forms themselves, for the values where the binlog and the server's text differ most.
      const column = (name: string) => table.columns.findIndex((c) => c.name === name);
      const [a, , b] = inserted;
      expect(a?.[column('c_bigint_unsigned')]).toBe('18446744073709551615');
      expect(b?.[column('c_bigint')]).toBe('9007199254740993');
      expect(a?.[column('c_bit64')]).toBe('18446744073709551615');
      expect(a?.[column('c_decimal')]).toBe('12345678901234567890.1234567891');
      expect(b?.[column('c_decimal')]).toBe('-0.0000000001');
      expect(b?.[column('c_float')]).toBe(16777200);
      expect(a?.[column('c_float_md')]).toBe(12345.6787);
      expect(a?.[column('c_datetime')]).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000);
      expect(a?.[column('c_timestamp')]).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 123) * 1000 + 456);
      // Past 2255 a double holds no single microsecond: the binlog gives the snapshot's double.
      expect(a?.[column('c_datetime6')]).toBe(parseTimestampText('9999-12-31 23:59:59.999999'));
      expect(b?.[column('c_date')]).toBeNull();
      expect(b?.[column('c_datetime')]).toBeNull();
      expect(b?.[column('c_datetime0')]).toBeNull();
      expect(b?.[column('c_timestamp')]).toBeNull();
      expect(a?.[column('c_time')]).toBe(-3_020_399);
      expect(b?.[column('c_time')]).toBe(-3600);
      expect(b?.[column('c_time3')]).toBe(-1.25);
      expect(a?.[column('c_time1')]).toBe(-60.5);
      expect(b?.[column('c_year')]).toBe(0);
      expect(b?.[column('c_enum_odd')]).toBe("it's");
      expect(a?.[column('c_tinytext_latin1')]).toBe('café €');
      expect(b?.[column('c_point')]).toBe('POINT(-0.0000000001 123456789.12345679)');
      expect(a?.[column('c_linestring')]).toBe('LINESTRING(0 0,1e15 -1e-16)');
      expect(a?.[column('c_binary')]).toBeInstanceOf(Uint8Array);
    } finally {
      await follower.stop();
    }
  });

  it('reads an ENUM holding the invalid value as the empty string, as the server prints it', async () => {
    const follower = new Follower(connector, [table], await positionNow(connector));
    try {
      await db.exec(`SET sql_mode = ''; INSERT INTO every_type (id, c_enum) VALUES (7, 'nope')`);
      const [insert] = changesOf(await follower.until((c) => c.length >= 1), 'insert');
      const [row] = await snapshotRows();
      expect(insert?.row).toEqual(row);
      expect(row?.[table.columns.findIndex((c) => c.name === 'c_enum')]).toBe('');
    } finally {
      await follower.stop();
      await db.exec('DELETE FROM every_type');
    }
  });
});
