/**
 * `node bench/key-index.ts`: the engine's key index (an open-addressing table in shared memory,
 * packages/engine/src/storage/key-table.ts) against the JS `Map` it replaced, in one run: build
 * time, lookup time for random keys (`first` and `all`), and bytes. Three shapes: a unique
 * integer key (a primary key), an integer key with ten rows a key (a foreign key), and a text key
 * (a composite key, joined as text).
 */
import { parseArgs } from 'node:util';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { type Key, KeyIndex } from '../packages/engine/src/storage/key-index.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    keys: { type: 'string', default: '1000000' },
    lookups: { type: 'string', default: '2000000' },
  },
});
const ROWS = Number(args.keys);
const LOOKUPS = Number(args.lookups);

type Entry = number | number[];

/** The index as it was: one Map, a row id or an array of row ids per key. */
function buildMap(keys: readonly Key[], unique: boolean): Map<Key, Entry> {
  const map = new Map<Key, Entry>();
  keys.forEach((key, rowId) => {
    const entry = map.get(key);
    if (unique || entry === undefined) map.set(key, rowId);
    else if (typeof entry === 'number') map.set(key, [entry, rowId]);
    else entry.push(rowId);
  });
  return map;
}

function timed<T>(run: () => T): [T, number] {
  const start = process.hrtime.bigint();
  const value = run();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

function heapBytes(): number {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

interface Shape {
  readonly name: string;
  readonly unique: boolean;
  readonly keys: readonly Key[];
  readonly probes: readonly Key[];
}

function shapes(): Shape[] {
  const random = mulberry32(17);
  const pick = <T>(from: readonly T[]) =>
    Array.from({ length: LOOKUPS }, () => from[Math.floor(random() * from.length)] as T);
  const ids = Array.from({ length: ROWS }, (_, i) => i + 1);
  const parents = Array.from({ length: ROWS }, () => 1 + Math.floor(random() * (ROWS / 10)));
  // Text keys are built afresh for each lookup, as `rowKey` does: a Map cannot reuse a hash.
  const text = (id: number) => `${id % 997}\u0000order-${id}`;
  const texts = ids.map(text);
  // Hashing flattens a concatenated string in place: done here, so that it does not shrink the
  // Map's memory figure below (the freed pieces) or slow its first build.
  new Set(texts);
  return [
    { name: 'unique int (PK)', unique: true, keys: ids, probes: pick(ids) },
    { name: 'int, 10 rows a key (FK)', unique: false, keys: parents, probes: pick(parents) },
    { name: 'unique text (composite)', unique: true, keys: texts, probes: pick(ids).map(text) },
  ];
}

const rows: Array<Record<string, string | number>> = [];
for (const shape of shapes()) {
  let before = heapBytes();
  const [map, mapBuild] = timed(() => buildMap(shape.keys, shape.unique));
  const mapBytes = heapBytes() - before;
  before = heapBytes();
  const [index, indexBuild] = timed(() =>
    KeyIndex.build([0], shape.unique, (add) => {
      shape.keys.forEach((key, rowId) => {
        add(key, rowId);
      });
    }),
  );
  const indexBytes = heapBytes() - before;
  let sink = 0;
  const lookups = (label: string, mapRun: () => void, indexRun: () => void) => {
    // Alternate twice so that warm-up and the other helpers' load touch both sides alike.
    let mapMs = 0;
    let indexMs = 0;
    for (let round = 0; round < 2; round++) {
      mapMs += timed(mapRun)[1];
      indexMs += timed(indexRun)[1];
    }
    rows.push({
      shape: shape.name,
      what: label,
      'Map ns': (mapMs * 1e6) / (2 * LOOKUPS),
      'index ns': (indexMs * 1e6) / (2 * LOOKUPS),
      'index ÷ Map': indexMs / mapMs,
    });
  };
  lookups(
    'first',
    () => {
      for (const key of shape.probes) {
        const entry = map.get(key);
        sink += entry === undefined ? 0 : typeof entry === 'number' ? entry : (entry[0] as number);
      }
    },
    () => {
      for (const key of shape.probes) sink += index.first(key) ?? 0;
    },
  );
  lookups(
    'all',
    () => {
      for (const key of shape.probes) {
        const entry = map.get(key);
        const all = entry === undefined ? [] : typeof entry === 'number' ? [entry] : entry;
        sink += all.length;
      }
    },
    () => {
      for (const key of shape.probes) sink += index.all(key).length;
    },
  );
  let visited = 0;
  const count = (rowId: number) => {
    visited += rowId >= 0 ? 1 : 0;
  };
  lookups(
    'each row (no array)',
    () => {
      for (const key of shape.probes) {
        const entry = map.get(key);
        if (entry === undefined) continue;
        if (typeof entry === 'number') count(entry);
        else for (const rowId of entry) count(rowId);
      }
    },
    () => {
      for (const key of shape.probes) index.forEachRow(key, count);
    },
  );
  sink += visited;
  rows.push({
    shape: shape.name,
    what: 'build ms',
    'Map ns': mapBuild,
    'index ns': indexBuild,
    'index ÷ Map': indexBuild / mapBuild,
  });
  rows.push({
    shape: shape.name,
    what: 'MB (heap + buffers)',
    'Map ns': mapBytes / 1e6,
    'index ns': indexBytes / 1e6,
    'index ÷ Map': indexBytes / mapBytes,
  });
  if (sink === -1) console.log(sink);
}
printTable(`Key index: ${ROWS} keys, ${LOOKUPS} random lookups (ns a lookup)`, rows);
