import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { Generation } from '../src/storage/generation.ts';
import { nextGeneration } from '../src/storage/generation-builder.ts';
import { decodeGeneration, encodeGeneration } from '../src/storage/generation-codec.ts';
import {
  exportGeneration,
  importGeneration,
  type SharedGeneration,
} from '../src/storage/shared-generation.ts';
import { buildGeneration, runQuery, shop } from './fixtures.ts';
import { ledgerChanges, ledgerRows, ledgerSource } from './ledger-fixture.ts';

const LEDGER_QUERIES = [
  'accounts { * entries { id amount note } } ORDER BY num LIMIT 40',
  'accounts (balance > 4611686018427387904) { region num balance } ORDER BY num',
  'entries (id IN (7, 9, 4611686018427388004, 1234)) { id region num } ORDER BY id',
  'entries (region IS NULL) { id } ORDER BY id LIMIT 30',
  'entries { region COUNT(*) SUM(amount) } ORDER BY region',
];

/** Through bytes: encoded, each buffer copied out, decoded. */
function throughBytes(shared: SharedGeneration): SharedGeneration {
  const { structure, buffers } = encodeGeneration(shared);
  return decodeGeneration(
    structure,
    buffers.map((bytes) => Uint8Array.from(bytes)),
  );
}

describe('a generation encoded as bytes', () => {
  it('answers every query as the original, after changes (deletes, NULLs, exact numbers, bigints, composite keys)', () => {
    const schema = compileSchema(ledgerSource, parseSchemaConfig({}));
    let generation: Generation = buildGeneration(schema, ledgerRows(300, 3000), 64);
    for (let step = 1; step <= 6; step++) {
      generation = nextGeneration(
        generation,
        ledgerChanges(step, (step * 211) % 2500, 200, 300, 3000),
        step + 1,
      );
    }
    const decoded = importGeneration(schema, throughBytes(exportGeneration(generation)));
    expect(decoded.id).toBe(generation.id);
    expect(decoded.createdAt).toBe(generation.createdAt);
    expect([...decoded.tableStamps]).toEqual([...generation.tableStamps]);
    for (const text of LEDGER_QUERIES) {
      const expected = runQuery(schema, generation, text).data;
      expect(expected.length, text).toBeGreaterThan(0);
      expect(runQuery(schema, decoded, text).data, text).toEqual(expected);
    }
    const { schema: shopSchema, generation: shopGeneration } = shop();
    const shopDecoded = importGeneration(
      shopSchema,
      throughBytes(exportGeneration(shopGeneration)),
    );
    const text = 'customers { * orders { * } } ORDER BY id';
    expect(runQuery(shopSchema, shopDecoded, text).data).toEqual(
      runQuery(shopSchema, shopGeneration, text).data,
    );
  });

  it('writes each buffer once, and arrays over one buffer share it again, shared when it was', () => {
    const shared = new SharedArrayBuffer(32);
    const plain = new ArrayBuffer(8);
    const value = {
      a: new Int32Array(shared, 0, 4),
      b: new Float64Array(shared, 16, 2),
      c: new Uint8Array(plain),
    };
    const { structure, buffers } = encodeGeneration(value as unknown as SharedGeneration);
    expect(buffers.map((bytes) => bytes.byteLength)).toEqual([32, 8]);
    // Bytes copied out of their buffers, as a reader of a file would give them.
    const decoded = decodeGeneration(
      structure,
      buffers.map((bytes) => Uint8Array.from(bytes)),
    ) as unknown as typeof value;
    expect(decoded.a.buffer).toBe(decoded.b.buffer);
    expect(decoded.a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(decoded.c.buffer).toBeInstanceOf(ArrayBuffer);
    expect(decoded.c.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    expect([decoded.b.byteOffset, decoded.b.length]).toEqual([16, 2]);
    // A copy: writing the decoded arrays leaves the encoded bytes as they were.
    decoded.a[0] = 7;
    expect(value.a[0]).toBe(0);
  });

  it('uses a shared buffer given whole as it is, and copies one given in part', () => {
    const shared = new SharedArrayBuffer(16);
    const value = { a: new Int32Array(shared, 4, 2) };
    const { structure } = encodeGeneration(value as unknown as SharedGeneration);
    const adopted = decodeGeneration(structure, [
      new Uint8Array(shared),
    ]) as unknown as typeof value;
    expect(adopted.a.buffer).toBe(shared);
    const larger = new SharedArrayBuffer(32);
    const copied = decodeGeneration(structure, [
      new Uint8Array(larger, 0, 16),
    ]) as unknown as typeof value;
    expect(copied.a.buffer).not.toBe(larger);
    expect(copied.a.buffer.byteLength).toBe(16);
  });

  it('writes of an array over a plain buffer its own bytes only, never the rest of a pool', () => {
    const pooled = Buffer.from('abc');
    expect(pooled.buffer.byteLength).toBeGreaterThan(3);
    const { structure, buffers } = encodeGeneration({
      bytes: pooled,
    } as unknown as SharedGeneration);
    expect(buffers.map((bytes) => [...bytes])).toEqual([[97, 98, 99]]);
    const decoded = decodeGeneration(structure, buffers) as unknown as { bytes: Uint8Array };
    expect(Buffer.from(decoded.bytes).toString()).toBe('abc');
  });

  it('keeps the numbers JSON cannot write, bigints, maps, sets and NULL holes', () => {
    const value = {
      min: Number.NEGATIVE_INFINITY,
      max: Number.POSITIVE_INFINITY,
      none: Number.NaN,
      zero: -0,
      big: 2n ** 70n,
      list: [1, null, -0],
      byKey: new Map<unknown, unknown>([
        ['a', 1n],
        [2, new Set(['x'])],
      ]),
      keys: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]),
    };
    const decoded = decodeGeneration(
      ...(Object.values(encodeGeneration(value as unknown as SharedGeneration)) as [
        string,
        Uint8Array[],
      ]),
    ) as unknown as typeof value;
    expect(decoded.min).toBe(Number.NEGATIVE_INFINITY);
    expect(decoded.max).toBe(Number.POSITIVE_INFINITY);
    expect(decoded.none).toBeNaN();
    expect(Object.is(decoded.zero, -0)).toBe(true);
    expect(decoded.big).toBe(2n ** 70n);
    expect(Object.is(decoded.list[2], -0)).toBe(true);
    expect(decoded.list[1]).toBeNull();
    expect(decoded.byKey).toEqual(
      new Map<unknown, unknown>([
        ['a', 1n],
        [2, new Set(['x'])],
      ]),
    );
    expect([...decoded.keys]).toEqual([-(2n ** 63n), 2n ** 63n - 1n]);
  });

  it('refuses what it could not give back: a class, a key starting with NUL, an unknown tag', () => {
    expect(() => encodeGeneration({ when: new Date() } as unknown as SharedGeneration)).toThrow(
      'A generation cannot hold a Date.',
    );
    expect(() => encodeGeneration({ '\u0000x': 1 } as unknown as SharedGeneration)).toThrow('NUL');
    expect(() => decodeGeneration(JSON.stringify({ '\u0000': 'date' }), [])).toThrow(
      'Unknown tag date.',
    );
    expect(() =>
      decodeGeneration(
        JSON.stringify({
          '\u0000': 'array',
          type: 'Uint8Array',
          buffer: 3,
          shared: false,
          byteOffset: 0,
          length: 1,
        }),
        [],
      ),
    ).toThrow('no buffer 3');
  });
});
