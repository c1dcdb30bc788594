/** Timestamps and times to the microsecond: literals, output digits, filters, order, paging. */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceColumn } from '../src/source-schema.ts';
import {
  daysFromCivil,
  epochMicros,
  parseIsoTimestamp,
  timestampDigits,
  timestampText,
} from '../src/storage/civil-date.ts';
import type { Generation } from '../src/storage/generation.ts';
import { column, loadGeneration, runQuery, table } from './fixtures.ts';

/** Epoch microseconds of a UTC wall clock, from its parts. */
function micros(y: number, mo: number, d: number, h: number, mi: number, s: number, us = 0) {
  return epochMicros(daysFromCivil(y, mo, d), h * 3600 + mi * 60 + s, us);
}

describe('parseIsoTimestamp', () => {
  it('reads up to six fractional digits exactly, cutting any beyond', () => {
    const base = micros(2022, 9, 10, 16, 46, 3);
    expect(parseIsoTimestamp('2022-09-10T16:46:03.905795Z')).toBe(base + 905_795);
    expect(parseIsoTimestamp('2022-09-10 16:46:03.905795')).toBe(base + 905_795);
    expect(parseIsoTimestamp('2022-09-10T16:46:03.9Z')).toBe(base + 900_000);
    expect(parseIsoTimestamp('2022-09-10T16:46:03.000001Z')).toBe(base + 1);
    expect(parseIsoTimestamp('2022-09-10T16:46:03.9057959Z')).toBe(base + 905_795);
    expect(parseIsoTimestamp('2022-09-10T16:46:03,5Z')).toBe(base + 500_000);
  });

  it('applies zone offsets and reads text without one as UTC', () => {
    const utc = micros(2024, 1, 1, 10, 0, 0, 250_000);
    expect(parseIsoTimestamp('2024-01-01T10:00:00.25')).toBe(utc);
    expect(parseIsoTimestamp('2024-01-01T12:00:00.25+02')).toBe(utc);
    expect(parseIsoTimestamp('2024-01-01T12:00:00.25+02:00')).toBe(utc);
    expect(parseIsoTimestamp('2024-01-01T05:30:00.25-0430')).toBe(utc);
    expect(parseIsoTimestamp('2024-01-01T10:00:00.25z')).toBe(utc);
  });

  it('reads dates, minutes-only times, years before 1970 and leap days', () => {
    expect(parseIsoTimestamp('2024-02-29')).toBe(micros(2024, 2, 29, 0, 0, 0));
    expect(parseIsoTimestamp('2024-02-29T23:59')).toBe(micros(2024, 2, 29, 23, 59, 0));
    expect(parseIsoTimestamp('1969-12-31T23:59:59.999999Z')).toBe(-1);
    expect(parseIsoTimestamp('1900-03-01T00:00:00.000001Z')).toBe(Date.UTC(1900, 2, 1) * 1000 + 1);
  });

  it('rejects other shapes and impossible dates or times', () => {
    for (const text of [
      'yesterday',
      '2023-02-29',
      '2024-13-01',
      '2024-01-01T24:00:00',
      '2024-01-01T10:60:00',
      '2024-01-01T10:00:61',
      '2024-01-01T10:00:00.',
      '1714564800000',
    ]) {
      expect(parseIsoTimestamp(text), text).toBeUndefined();
    }
  });
});

describe('timestampText', () => {
  it('prints milliseconds (cut) or microseconds', () => {
    const value = micros(2022, 9, 10, 16, 46, 3, 905_795);
    expect(timestampText(value, 6)).toBe('2022-09-10T16:46:03.905795Z');
    expect(timestampText(value, 3)).toBe('2022-09-10T16:46:03.905Z');
    expect(timestampText(micros(2024, 2, 29, 23, 59, 59, 999_999), 6)).toBe(
      '2024-02-29T23:59:59.999999Z',
    );
  });

  it('counts negative epochs down from the next second, as the calendar does', () => {
    expect(timestampText(-1, 6)).toBe('1969-12-31T23:59:59.999999Z');
    expect(timestampText(-1, 3)).toBe('1969-12-31T23:59:59.999Z');
    expect(timestampText(-1_000_000, 6)).toBe('1969-12-31T23:59:59.000000Z');
    expect(timestampText(micros(1700, 1, 1, 0, 0, 0, 1), 6)).toBe('1700-01-01T00:00:00.000001Z');
  });

  it('round-trips every microsecond of a leap day through its text', () => {
    const start = micros(2024, 2, 29, 0, 0, 0);
    for (let i = 0; i < 2000; i++) {
      const value = start + i * 43_200_000_017; // strides of about half a day and 17 µs
      expect(parseIsoTimestamp(timestampText(value, 6))).toBe(value);
    }
  });
});

describe('timestampDigits', () => {
  it('is 3 for precision 0..3, 6 for 4..6, and by value when the precision is unknown', () => {
    for (const precision of [0, 1, 2, 3]) expect(timestampDigits(precision, 1)).toBe(3);
    for (const precision of [4, 5, 6]) expect(timestampDigits(precision, 0)).toBe(6);
    expect(timestampDigits(undefined, 5_000)).toBe(3);
    expect(timestampDigits(undefined, 5_001)).toBe(6);
  });
});

function precise(name: string, type: 'timestamp' | 'time', precision?: number): SourceColumn {
  return { ...column(name, type), ...(precision === undefined ? {} : { precision }) };
}

/** Rows 1..4 around one second, microseconds apart; `at3` a column of precision 3. */
function fixture(): { schema: CompiledSchema; generation: Generation } {
  const source = {
    tables: [
      table('t', [
        column('id', 'int', false),
        precise('at', 'timestamp', 6),
        precise('at3', 'timestamp', 3),
        precise('wake', 'time', 6),
      ]),
      table('k', [precise('id', 'timestamp', 6)]),
    ],
  };
  const schema = compileSchema(source, parseSchemaConfig({}));
  const second = micros(2022, 9, 10, 16, 46, 3);
  const generation = loadGeneration(schema, {
    t: [
      [1, second + 905_795, second, 45_296.000001],
      [2, second + 905_796, second + 905_000, 86_399.999999],
      [3, second + 905_000, null, 0.5],
      [4, -1, -1_000, -0.000001],
    ],
    k: [[second + 3], [second + 1], [second + 2], [-1]],
  });
  return { schema, generation };
}

describe('microsecond columns in queries', () => {
  const { schema, generation } = fixture();
  const ids = (text: string) =>
    runQuery(schema, generation, text).data.map((row: { id: unknown }) => row.id);

  it('prints 6 digits for precision 6 and 3 for precision 3; times as seconds', () => {
    expect(runQuery(schema, generation, 't { id at at3 wake } ORDER BY id').data).toEqual([
      {
        id: 1,
        at: '2022-09-10T16:46:03.905795Z',
        at3: '2022-09-10T16:46:03.000Z',
        wake: 45_296.000001,
      },
      {
        id: 2,
        at: '2022-09-10T16:46:03.905796Z',
        at3: '2022-09-10T16:46:03.905Z',
        wake: 86_399.999999,
      },
      { id: 3, at: '2022-09-10T16:46:03.905000Z', at3: null, wake: 0.5 },
      {
        id: 4,
        at: '1969-12-31T23:59:59.999999Z',
        at3: '1969-12-31T23:59:59.999Z',
        wake: -0.000001,
      },
    ]);
  });

  it('filters on the full value: =, <, BETWEEN, IN', () => {
    expect(ids("t (at = '2022-09-10T16:46:03.905795Z') { id }")).toEqual([1]);
    expect(ids("t (at = '2022-09-10T16:46:03.905Z') { id }")).toEqual([3]);
    expect(ids("t (at < '2022-09-10T16:46:03.905796Z') { id } ORDER BY id")).toEqual([1, 3, 4]);
    expect(ids("t (at > '2022-09-10 18:46:03.905795+02:00') { id }")).toEqual([2]);
    expect(
      ids(
        "t (at BETWEEN '2022-09-10T16:46:03.905001Z' AND '2022-09-10T16:46:03.905796Z') { id } ORDER BY id",
      ),
    ).toEqual([1, 2]);
    expect(
      ids(
        "t (at IN ('2022-09-10T16:46:03.905796Z', '1969-12-31T23:59:59.999999Z')) { id } ORDER BY id",
      ),
    ).toEqual([2, 4]);
    expect(ids('t (wake = 45296.000001) { id }')).toEqual([1]);
    expect(ids('t (wake > 86399.999998) { id }')).toEqual([2]);
    expect(ids('t (wake < 0) { id }')).toEqual([4]);
  });

  it('sorts on the full value, both ways', () => {
    expect(ids('t { id } ORDER BY at')).toEqual([4, 3, 1, 2]);
    expect(ids('t { id } ORDER BY at DESC')).toEqual([2, 1, 3, 4]);
    expect(ids('t { id } ORDER BY wake')).toEqual([4, 3, 1, 2]);
  });

  it('orders a timestamp key by microseconds (AFTER stays for integer and text keys)', () => {
    expect(ids('k { id } ORDER BY id')).toEqual([
      '1969-12-31T23:59:59.999999Z',
      '2022-09-10T16:46:03.000001Z',
      '2022-09-10T16:46:03.000002Z',
      '2022-09-10T16:46:03.000003Z',
    ]);
    expect(() => runQuery(schema, generation, "k { id } LIMIT 1 AFTER ''")).toThrow(
      /single-column integer or text primary key/,
    );
  });

  it('names the expected form for a literal that is no timestamp', () => {
    expect(() => runQuery(schema, generation, "t (at = 'soon') { id }")).toThrow(EngineError);
  });
});
