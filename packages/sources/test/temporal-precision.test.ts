import { describe, expect, it } from 'vitest';
import { precisionField, temporalPrecision } from '../src/temporal-precision.ts';

describe('temporalPrecision', () => {
  it('reads the declared fractional-second digits of MySQL, PostgreSQL and SQL Server types', () => {
    for (let fsp = 0; fsp <= 6; fsp++) {
      expect(temporalPrecision('timestamp', `datetime(${fsp})`, 0)).toBe(fsp);
      expect(temporalPrecision('timestamp', `timestamp(${fsp}) with time zone`, 6)).toBe(fsp);
      expect(temporalPrecision('time', `time(${fsp})`, 0)).toBe(fsp);
    }
    expect(temporalPrecision('timestamp', 'datetime2(7)', 0)).toBe(6);
    expect(temporalPrecision('time', 'time(7)', 0)).toBe(6);
  });

  it('takes the backend default when none is declared', () => {
    expect(temporalPrecision('timestamp', 'datetime', 0)).toBe(0);
    expect(temporalPrecision('timestamp', 'timestamp with time zone', 6)).toBe(6);
    expect(temporalPrecision('time', 'time without time zone', 6)).toBe(6);
  });

  it('leaves other columns without one', () => {
    expect(temporalPrecision('decimal', 'numeric(12,2)', 6)).toBeUndefined();
    expect(precisionField('string', 'varchar(20)', 6)).toEqual({});
    expect(precisionField('timestamp', 'timestamp(3) without time zone', 6)).toEqual({
      precision: 3,
    });
  });
});
