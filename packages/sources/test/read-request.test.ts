import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { decimalScale } from '../src/decimal-scale.ts';
import { checkReadRequest, DEFAULT_BATCH_SIZE } from '../src/read-request.ts';

const columns: SourceColumn[] = [{ name: 'id', type: 'int', nullable: false, sourceType: 'int' }];

describe('checkReadRequest', () => {
  it('defaults the batch size to 5000', () => {
    expect(DEFAULT_BATCH_SIZE).toBe(5000);
    expect(checkReadRequest({ table: 't', columns })).toBe(5000);
    expect(checkReadRequest({ table: 't', columns, batchSize: 7 })).toBe(7);
  });

  it('rejects batch sizes that never fill and reads of no columns', () => {
    for (const batchSize of [0, -1, 1.5, Number.NaN]) {
      expect(() => checkReadRequest({ table: 't', columns, batchSize })).toThrow(/batch size/);
    }
    expect(() => checkReadRequest({ table: 't', columns: [] })).toThrow(/at least one column/);
  });
});

describe('decimalScale', () => {
  it('reads the declared scale of both engines’ type text', () => {
    expect(decimalScale('decimal(12,2)')).toBe(2);
    expect(decimalScale('decimal(30,10) unsigned')).toBe(10);
    expect(decimalScale('numeric(5, 0)')).toBe(0);
    expect(decimalScale('numeric(5,-2)')).toBe(-2);
    expect(decimalScale('numeric(7)')).toBe(0);
    expect(decimalScale('numeric')).toBeUndefined();
  });
});
