import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { temporalParameter, withTemporalParameters } from '../src/temporal-parameter.ts';
import { parseTimestampText, parseTimeText } from '../src/temporal-text.ts';

const col = (name: string, type: SourceColumn['type']): SourceColumn => ({
  name,
  type,
  nullable: true,
  sourceType: type,
});

describe('temporalParameter', () => {
  it('prints timestamps as UTC wall clocks with six digits, the inverse of the snapshot parser', () => {
    for (const text of [
      '2022-09-10 16:46:03.905795',
      '1969-12-31 23:59:59.999999',
      '2024-02-29 23:59:59.999999',
      '1970-01-01 00:00:00.000000',
    ]) {
      const micros = parseTimestampText(text);
      expect(temporalParameter(col('at', 'timestamp'), micros)).toBe(text);
    }
  });

  it('prints times as [-]HH:MM:SS.ffffff, durations past a day and negative ones included', () => {
    for (const text of [
      '23:59:59.999999',
      '00:00:00.000001',
      '838:59:59.999999',
      '-00:00:01.500000',
    ]) {
      expect(temporalParameter(col('wake', 'time'), parseTimeText(text))).toBe(text);
    }
  });

  it('leaves other values alone', () => {
    expect(temporalParameter(col('n', 'int'), 5)).toBe(5);
    expect(temporalParameter(col('at', 'timestamp'), null)).toBeNull();
    expect(temporalParameter(undefined, 5)).toBe(5);
  });
});

describe('withTemporalParameters', () => {
  it('converts key values by their key column and the change-column value by its column', () => {
    const at = parseTimestampText('2022-09-10 16:46:03.905795');
    const request = withTemporalParameters({
      table: 't',
      columns: [col('id', 'int'), col('at', 'timestamp')],
      keyColumns: ['at', 'id'],
      keys: [[at, 7]],
      after: { column: 'at', value: at },
    });
    expect(request.keys).toEqual([['2022-09-10 16:46:03.905795', 7]]);
    expect(request.after).toEqual({ column: 'at', value: '2022-09-10 16:46:03.905795' });
  });
});
