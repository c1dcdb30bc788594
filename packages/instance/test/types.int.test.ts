import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { startTestInstance } from './instance-helpers.ts';

/** Runs `text` on a fresh instance over `url` and returns the raw response body. */
async function rawQuery(url: string, text: string): Promise<string> {
  const served = await startTestInstance(url);
  try {
    const response = await served.query(text);
    const body = await response.text();
    if (response.status !== 200) throw new Error(body);
    return body;
  } finally {
    await served.close();
  }
}

describe('every type of spec §2 from MariaDB', () => {
  it('loads and serves each as its JSON type, every digit kept', async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE all_types (
        id INT PRIMARY KEY,
        c_tinyint TINYINT, c_smallint SMALLINT, c_mediumint MEDIUMINT, c_int INT,
        c_int_unsigned INT UNSIGNED, c_bigint BIGINT, c_bigint_unsigned BIGINT UNSIGNED,
        c_float FLOAT, c_double DOUBLE, c_real REAL, c_decimal DECIMAL(30,10), c_numeric NUMERIC(6,2),
        c_boolean BOOLEAN, c_bit BIT(1), c_tinyint1 TINYINT(1),
        c_char CHAR(3), c_varchar VARCHAR(20), c_text TEXT, c_enum ENUM('small','large'),
        c_json JSON,
        c_date DATE, c_datetime DATETIME(3), c_timestamp TIMESTAMP(3) NULL, c_time TIME,
        c_binary BINARY(2), c_varbinary VARBINARY(4), c_blob BLOB
      );
      INSERT INTO all_types VALUES (1, -5, 300, -8000000, 2147483647, 4294967295, 9007199254740993,
        18446744073709551615, 1.5, 2.25, -0.125, 12345678901234567890.1234567890, 12.50,
        TRUE, b'1', 0, 'abc', 'héllo wörld', 'Σωκράτης 🙂', 'large', '{"a": [1, 2]}',
        '2024-02-29', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05.678', '-01:02:03',
        0x0aff, 0x01, 0xdeadbeef);
      INSERT INTO all_types (id) VALUES (2);
    `);
    const body = await rawQuery(db.url, 'all_types { * } ORDER BY id');
    for (const digits of [
      '"c_bigint":9007199254740993',
      '"c_bigint_unsigned":18446744073709551615',
      '"c_decimal":12345678901234567890.1234567890',
      '"c_numeric":12.50',
    ]) {
      expect(body).toContain(digits);
    }
    const { data } = JSON.parse(body);
    expect(data[0]).toEqual({
      id: 1,
      c_tinyint: -5,
      c_smallint: 300,
      c_mediumint: -8000000,
      c_int: 2147483647,
      c_int_unsigned: 4294967295,
      c_bigint: expect.any(Number), // exact digits checked in the raw text above
      c_bigint_unsigned: expect.any(Number), // exact digits checked in the raw text above
      c_float: 1.5,
      c_double: 2.25,
      c_real: -0.125,
      c_decimal: expect.any(Number), // exact digits checked in the raw text above
      c_numeric: 12.5,
      c_boolean: true,
      c_bit: true,
      c_tinyint1: false,
      c_char: 'abc',
      c_varchar: 'héllo wörld',
      c_text: 'Σωκράτης 🙂',
      c_enum: 'large',
      c_json: '{"a": [1, 2]}',
      c_date: '2024-02-29',
      c_datetime: '2024-01-02T03:04:05.678Z',
      c_timestamp: '2024-01-02T03:04:05.678Z',
      c_time: -3723,
      c_binary: '0aff',
      c_varbinary: '01',
      c_blob: 'deadbeef',
    });
    const nulls = Object.entries(data[1]).filter(([key]) => key !== 'id');
    expect(nulls.every(([, value]) => value === null)).toBe(true);
    expect(nulls).toHaveLength(27);
  });
});

describe('every type of spec §2 from PostgreSQL', () => {
  it('loads and serves each as its JSON type, every digit kept', async () => {
    const db = await testPostgres().createDatabase(`
      CREATE TABLE all_types (
        id int4 PRIMARY KEY,
        c_int2 int2, c_int4 int4, c_int8 int8, c_float4 float4, c_float8 float8,
        c_numeric numeric(30,10), c_money_like numeric(6,2), c_boolean boolean,
        c_char char(3), c_varchar varchar(20), c_text text,
        c_uuid uuid, c_inet inet, c_macaddr macaddr, c_interval interval,
        c_json json, c_jsonb jsonb,
        c_date date, c_timestamp timestamp(3), c_timestamptz timestamptz, c_time time, c_timetz timetz,
        c_bytea bytea
      );
      INSERT INTO all_types VALUES (1, -5, 2147483647, 9223372036854775807, 1.5, 2.25,
        12345678901234567890.1234567890, 12.50, true, 'abc', 'héllo', 'Σωκράτης 🙂',
        'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '192.168.0.1', '08:00:2b:01:02:03', '1 day 02:03:04',
        '{"a": [1, 2]}', '{"a": [1, 2]}',
        '2024-02-29', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05.678+02', '12:34:56.5', '12:00:00+02',
        '\\x0aff');
      INSERT INTO all_types (id) VALUES (2);
    `);
    const body = await rawQuery(db.url, 'all_types { * } ORDER BY id');
    for (const digits of [
      '"c_int8":9223372036854775807',
      '"c_numeric":12345678901234567890.1234567890',
      '"c_money_like":12.50',
    ]) {
      expect(body).toContain(digits);
    }
    const { data } = JSON.parse(body);
    expect(data[0]).toEqual({
      id: 1,
      c_int2: -5,
      c_int4: 2147483647,
      c_int8: expect.any(Number), // exact digits checked in the raw text above
      c_float4: 1.5,
      c_float8: 2.25,
      c_numeric: expect.any(Number), // exact digits checked in the raw text above
      c_money_like: 12.5,
      c_boolean: true,
      c_char: 'abc',
      c_varchar: 'héllo',
      c_text: 'Σωκράτης 🙂',
      c_uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      c_inet: '192.168.0.1',
      c_macaddr: '08:00:2b:01:02:03',
      c_interval: 'P1DT2H3M4S',
      c_json: '{"a": [1, 2]}',
      c_jsonb: '{"a": [1, 2]}',
      c_date: '2024-02-29',
      c_timestamp: '2024-01-02T03:04:05.678Z',
      c_timestamptz: '2024-01-02T01:04:05.678000Z',
      c_time: 45296.5,
      c_timetz: 36000,
      c_bytea: '0aff',
    });
    const nulls = Object.entries(data[1]).filter(([key]) => key !== 'id');
    expect(nulls.every(([, value]) => value === null)).toBe(true);
    expect(nulls).toHaveLength(23);
  });
});
