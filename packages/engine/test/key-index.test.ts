import { describe, expect, it } from 'vitest';
import { type Key, KeyIndex } from '../src/storage/key-index.ts';

/** The reference: a Map from key to row ids in row-id order. */
type Model = Map<Key, number[]>;

function build(pairs: readonly [Key, number][], unique: boolean): [KeyIndex, Model] {
  const model: Model = new Map();
  for (const [key, rowId] of pairs) {
    const rows = model.get(key) ?? [];
    if (unique) rows.length = 0;
    rows.push(rowId);
    model.set(key, rows);
  }
  const index = KeyIndex.build([0], unique, (add) => {
    for (const [key, rowId] of pairs) add(key, rowId);
  });
  return [index, model];
}

/** Checks every key of the model and `probes` (one assertion: `expect` per key is slow). */
function expectSame(index: KeyIndex, model: Model, probes: readonly Key[]): void {
  const wrong: string[] = [];
  for (const key of [...model.keys(), ...probes]) {
    const rows = model.get(key) ?? [];
    const visited: number[] = [];
    index.forEachRow(key, (rowId) => visited.push(rowId));
    const all = index.all(key);
    if (
      index.first(key) !== rows[0] ||
      all.join() !== rows.join() ||
      visited.join() !== rows.join()
    )
      wrong.push(`${String(key).slice(0, 20)}: ${all.join()} ≠ ${rows.join()}`);
  }
  expect(wrong).toEqual([]);
}

/** Keys no index holds, of every type, near the ones that are held. */
const ABSENT: Key[] = [-1, 0.5, 2 ** 60, 'absent', '', 99n, false, '1', 1n];

/** Keys of every type an index meets, and the values a Map tells apart or not. */
const ODD_KEYS: Key[] = [
  0,
  1,
  -7,
  1.5,
  2 ** 53 + 2,
  1e300,
  -2_147_483_648,
  2 ** 31,
  Number.NaN,
  2n ** 64n,
  -(2n ** 63n),
  true,
  'true',
  '1',
  'Σωκράτης',
  '日本\u00007',
  '🙂 emoji',
  'x'.repeat(70_000),
];

describe('a key index', () => {
  it('finds integer keys, unique or with several rows each, in row-id order', () => {
    const pairs: [Key, number][] = [];
    for (let rowId = 0; rowId < 5000; rowId++) pairs.push([(rowId * 7919) % 1000, rowId]);
    const [many, manyModel] = build(pairs, false);
    expectSame(many, manyModel, ABSENT);
    const [unique, uniqueModel] = build(
      Array.from({ length: 5000 }, (_, rowId) => [rowId * 3 - 2000, rowId] as [Key, number]),
      true,
    );
    expectSame(unique, uniqueModel, ABSENT);
  });

  it('tells keys of every type apart as a Map does (0 and -0 one key, 1 and 1n and "1" three)', () => {
    const pairs = ODD_KEYS.map((key, rowId) => [key, rowId] as [Key, number]);
    pairs.push([-0, 100], [Number.NaN, 101], ['🙂 emoji', 102]);
    for (const unique of [true, false]) {
      const [index, model] = build(pairs, unique);
      expectSame(index, model, ABSENT);
      expect(index.all(-0)).toEqual(unique ? [100] : [0, 100]);
    }
    // Mixed numbers and bigints, as a BIGINT column past 2^53 gives.
    const [mixed, mixedModel] = build(
      [
        [5, 0],
        [2n ** 62n, 1],
        [5, 2],
      ],
      false,
    );
    expectSame(mixed, mixedModel, [5n, 2 ** 62, '5']);
  });

  it('keeps answering through changes, layer merges and folds into a new base', () => {
    for (const unique of [true, false]) {
      const pairs: [Key, number][] = [];
      for (let rowId = 0; rowId < 2000; rowId++)
        pairs.push([unique ? rowId : `k${rowId % 300}`, rowId]);
      const [built, model] = build(pairs, unique);
      let index = built;
      let nextRow = 2000;
      for (let step = 0; step < 30; step++) {
        const removed: [Key, number][] = [];
        const added: [Key, number][] = [];
        // Remove a few rows, add many (some steps past the fold threshold).
        for (const [key, rows] of [...model].slice(step * 3, step * 3 + 3)) {
          removed.push([key, rows[0] as number]);
          rows.shift();
          if (rows.length === 0) model.delete(key);
        }
        const adding = step % 9 === 8 ? 6000 : 50;
        for (let i = 0; i < adding; i++) {
          const key: Key = unique ? nextRow : `k${(nextRow * 31) % 700}`;
          added.push([key, nextRow]);
          const rows = model.get(key) ?? [];
          if (unique) rows.length = 0;
          rows.push(nextRow++);
          model.set(key, rows);
        }
        index = index.withChanges(removed, added);
        // Every ninth change merges the layers; with 6,000 new keys they fold into the base.
        if (step % 9 === 8) expect(index.toShared().layers).toHaveLength(0);
        // The index survives a structured clone, as it is posted to worker threads.
        if (step % 10 === 9) index = KeyIndex.fromShared(structuredClone(index.toShared()));
        expectSame(index, model, ABSENT);
      }
    }
  }, 60_000);

  it('matches a Map through random removals and re-adds of the same keys, merges and folds', () => {
    let seed = 17;
    const random = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    for (const unique of [true, false]) {
      for (const keyOf of [(n: number): Key => n, (n: number): Key => `k${n}`]) {
        const [built, model] = build(
          Array.from({ length: 500 }, (_, rowId) => [keyOf(rowId % 400), rowId] as [Key, number]),
          unique,
        );
        let index = built;
        let nextRow = 500;
        for (let step = 0; step < 120; step++) {
          const removed: [Key, number][] = [];
          const added: [Key, number][] = [];
          // A batch: rows removed, then rows added, often under keys just removed.
          const size = random() < 0.1 ? 300 : 1 + Math.floor(random() * 20);
          const live = [...model].flatMap(([key, rows]) => rows.map((row) => [key, row] as const));
          const gone = new Set<number>();
          for (let i = 0; i < size && live.length > 0; i++) {
            const [key, row] = live[Math.floor(random() * live.length)] as readonly [Key, number];
            if (gone.has(row)) continue;
            gone.add(row);
            removed.push([key, row]);
            const rows = model.get(key) as number[];
            rows.splice(rows.indexOf(row), 1);
            if (rows.length === 0) model.delete(key);
          }
          for (let i = 0; i < size; i++) {
            const key =
              random() < 0.5 && removed.length > 0
                ? (removed[Math.floor(random() * removed.length)] as [Key, number])[0]
                : keyOf(Math.floor(random() * 600));
            // A unique index holds one row a key: the source removes the old one first.
            if (unique && model.has(key)) {
              for (const row of model.get(key) as number[]) removed.push([key, row]);
              model.delete(key);
            }
            added.push([key, nextRow]);
            model.set(key, [...(model.get(key) ?? []), nextRow++]);
          }
          index = index.withChanges(removed, added);
          if (step % 25 === 24) index = KeyIndex.fromShared(structuredClone(index.toShared()));
          expectSame(index, model, [keyOf(-1), keyOf(599)]);
        }
      }
    }
  }, 60_000);

  it('counts the bytes of its shared table', () => {
    const [index] = build(
      Array.from({ length: 10_000 }, (_, rowId) => [rowId, rowId] as [Key, number]),
      true,
    );
    // 10,000 keys at most 70% full: 16,384 slots of a double and an int.
    expect(index.byteSize).toBeGreaterThanOrEqual(16_384 * 12);
    expect(index.byteSize).toBeLessThan(16_384 * 12 + 1024);
  });
});
