import { Buffer } from 'node:buffer';
import { sharedArray, sharedCopy } from './shared-arrays.ts';

/** An index key: the column's value, or for several columns their values joined. */
export type Key = number | bigint | string | boolean;

/**
 * A key's rows, encoded in one int: `rowId + 1` for a key with one row, `-(list + 1)` for a
 * key with several (rows `listRows[listStarts[list] .. listStarts[list + 1])`), 0 for none.
 */
export type Encoded = number;

/** A `KeyTable` as structured-cloneable data: every array is over a SharedArrayBuffer. */
export interface SharedKeyTable {
  /** Distinct keys. */
  readonly size: number;
  readonly mask: number;
  /** Number keys: the key and the encoded rows of each slot (0: empty). */
  readonly slotKeys: Float64Array | null;
  readonly slotValues: Int32Array | null;
  /**
   * Other keys: three ints a slot (hash, key start + 1 (0: empty), encoded rows), the key at
   * `keyBytes[start]` as a type tag, its body's byte length (4 bytes little-endian), its body
   * (UTF-8). One slot and one key read per lookup: two cache misses.
   */
  readonly slots: Int32Array | null;
  readonly keyBytes: Uint8Array | null;
  readonly listStarts: Uint32Array;
  readonly listRows: Int32Array;
}

/** Slots per key at most: linear probing stays short below this load. */
const MAX_LOAD = 0.7;

/** Type tags of keys in the tagged layout, first byte of a key's bytes. */
const TAG_STRING = 115; // s
const TAG_NUMBER = 110; // n
const TAG_BIGINT = 98; // b
const TAG_TRUE = 116; // t
const TAG_FALSE = 102; // f

const encoder = new TextEncoder();
const float = new Float64Array(1);
const floatWords = new Int32Array(float.buffer);

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function hashNumber(key: number): number {
  if ((key | 0) === key) return mix(key);
  float[0] = key;
  return mix((floatWords[0] as number) ^ mix(floatWords[1] as number));
}

/** Hash of a tagged key from its UTF-16 code units (so a lookup needs no encoding). */
function hashText(tag: number, text: string): number {
  let h = Math.imul(tag, 0x01000193) ^ 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix(h ^ text.length);
}

function tagOf(key: Key): number {
  switch (typeof key) {
    case 'string':
      return TAG_STRING;
    case 'number':
      return TAG_NUMBER;
    case 'bigint':
      return TAG_BIGINT;
    default:
      return key ? TAG_TRUE : TAG_FALSE;
  }
}

/** The text after the tag: `String` is exact for numbers (and 0 and -0 are one key, as in a Map). */
function bodyOf(key: Key): string {
  return typeof key === 'string' ? key : typeof key === 'boolean' ? '' : String(key);
}

/**
 * Whether `bytes[start, end)` is the UTF-8 of `text`, encoded on the fly (no allocation). A
 * lone surrogate compares as U+FFFD, as the encoder wrote it.
 */
function utf8Equals(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  let p = start;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      if (p >= end || bytes[p] !== c) return false;
      p++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else c = 0xfffd;
    }
    if (c < 0x800) {
      if (p + 2 > end || bytes[p] !== (0xc0 | (c >> 6)) || bytes[p + 1] !== (0x80 | (c & 63)))
        return false;
      p += 2;
    } else if (c < 0x10000) {
      if (
        p + 3 > end ||
        bytes[p] !== (0xe0 | (c >> 12)) ||
        bytes[p + 1] !== (0x80 | ((c >> 6) & 63)) ||
        bytes[p + 2] !== (0x80 | (c & 63))
      )
        return false;
      p += 3;
    } else {
      if (
        p + 4 > end ||
        bytes[p] !== (0xf0 | (c >> 18)) ||
        bytes[p + 1] !== (0x80 | ((c >> 12) & 63)) ||
        bytes[p + 2] !== (0x80 | ((c >> 6) & 63)) ||
        bytes[p + 3] !== (0x80 | (c & 63))
      )
        return false;
      p += 4;
    }
  }
  return p === end;
}

/** The byte length of the body of the key at `start` (after its tag). */
function bodyLength(bytes: Uint8Array, start: number): number {
  return (
    ((bytes[start + 1] as number) |
      ((bytes[start + 2] as number) << 8) |
      ((bytes[start + 3] as number) << 16) |
      ((bytes[start + 4] as number) << 24)) >>>
    0
  );
}

const EMPTY_INTS = new Int32Array(0);
const EMPTY_BYTES = new Uint8Array(0);

function capacityFor(keys: number): number {
  let capacity = 16;
  while (capacity * MAX_LOAD < keys) capacity *= 2;
  return capacity;
}

/**
 * The base of a `KeyIndex`: an open-addressing hash table (linear probing) in shared memory,
 * from key to row ids. Number keys (the common case: integer keys) keep the key beside each
 * slot; other keys are stored as tagged UTF-8 and compared byte for byte. Immutable.
 */
export class KeyTable {
  readonly #t: SharedKeyTable;
  readonly #mask: number;
  readonly #slotKeys: Float64Array | null;
  readonly #slotValues: Int32Array;
  readonly #slots: Int32Array;
  readonly #keyBytes: Uint8Array;
  readonly #listStarts: Uint32Array;
  readonly #listRows: Int32Array;

  constructor(table: SharedKeyTable) {
    this.#t = table;
    this.#mask = table.mask;
    this.#slotKeys = table.slotKeys;
    this.#slotValues = table.slotValues ?? EMPTY_INTS;
    this.#slots = table.slots ?? EMPTY_INTS;
    this.#keyBytes = table.keyBytes ?? EMPTY_BYTES;
    this.#listStarts = table.listStarts;
    this.#listRows = table.listRows;
  }

  toShared(): SharedKeyTable {
    return this.#t;
  }

  /** Distinct keys. */
  get size(): number {
    return this.#t.size;
  }

  /** Bytes of its shared arrays. */
  get byteSize(): number {
    const t = this.#t;
    let bytes = t.listStarts.byteLength + t.listRows.byteLength;
    for (const array of [t.slotKeys, t.slotValues, t.slots, t.keyBytes])
      bytes += array?.byteLength ?? 0;
    return bytes;
  }

  /** The encoded rows of `key` (0: none). */
  find(key: Key): Encoded {
    const keys = this.#slotKeys;
    if (keys === null) return this.#findTagged(key);
    if (typeof key !== 'number') return 0;
    const values = this.#slotValues;
    const mask = this.#mask;
    let slot = hashNumber(key) & mask;
    for (;;) {
      const value = values[slot] as number;
      if (value === 0 || keys[slot] === key) return value;
      slot = (slot + 1) & mask;
    }
  }

  #findTagged(key: Key): Encoded {
    const slots = this.#slots;
    const bytes = this.#keyBytes;
    const mask = this.#mask;
    const tag = tagOf(key);
    const body = bodyOf(key);
    const hash = hashText(tag, body);
    let slot = hash & mask;
    for (;;) {
      const at = slot * 3;
      const start = (slots[at + 1] as number) - 1;
      if (start < 0) return 0;
      if (slots[at] === hash && bytes[start] === tag) {
        const from = start + 5;
        if (utf8Equals(bytes, from, from + bodyLength(bytes, start), body))
          return slots[at + 2] as number;
      }
      slot = (slot + 1) & mask;
    }
  }

  /** The first row of encoded rows. */
  firstOf(value: Encoded): number {
    return value > 0
      ? value - 1
      : (this.#listRows[this.#listStarts[-value - 1] as number] as number);
  }

  /** The rows of encoded rows, as a new array in row-id order. */
  rowsOf(value: Encoded): number[] {
    if (value > 0) return [value - 1];
    const list = -value - 1;
    const start = this.#listStarts[list] as number;
    const end = this.#listStarts[list + 1] as number;
    const rows: number[] = [];
    for (let i = start; i < end; i++) rows.push(this.#listRows[i] as number);
    return rows;
  }

  /** Calls `visit` with each row of encoded rows, in row-id order. */
  visitRows(value: Encoded, visit: (rowId: number) => void): void {
    if (value > 0) {
      visit(value - 1);
      return;
    }
    const list = -value - 1;
    const end = this.#listStarts[list + 1] as number;
    for (let i = this.#listStarts[list] as number; i < end; i++) visit(this.#listRows[i] as number);
  }

  /** Calls `visit` with every key and its rows (in row-id order), in no particular key order. */
  forEach(visit: (key: Key, rows: number[]) => void): void {
    if (this.#slotKeys !== null) {
      for (let slot = 0; slot <= this.#mask; slot++) {
        const value = this.#slotValues[slot] as number;
        if (value !== 0) visit(this.#slotKeys[slot] as number, this.rowsOf(value));
      }
      return;
    }
    const slots = this.#slots;
    const bytes = Buffer.from(
      this.#keyBytes.buffer,
      this.#keyBytes.byteOffset,
      this.#keyBytes.byteLength,
    );
    for (let at = 0; at < slots.length; at += 3) {
      const start = (slots[at + 1] as number) - 1;
      if (start < 0) continue;
      const from = start + 5;
      const body = bytes.toString('utf8', from, from + bodyLength(bytes, start));
      let key: Key;
      switch (bytes[start]) {
        case TAG_STRING:
          key = body;
          break;
        case TAG_NUMBER:
          key = Number(body);
          break;
        case TAG_BIGINT:
          key = BigInt(body);
          break;
        default:
          key = bytes[start] === TAG_TRUE;
      }
      visit(key, this.rowsOf(slots[at + 2] as number));
    }
  }

  /**
   * Builds a table from (key, row id) pairs; a key's rows must come in row-id order (keys may
   * interleave). With `unique`, a key keeps its last row.
   */
  static build(keys: readonly Key[], rows: ArrayLike<number>, unique: boolean): KeyTable {
    const numeric = keys.every((key) => typeof key === 'number' && !Number.isNaN(key));
    if (numeric && unique) return new KeyTable(uniqueNumbers(keys as readonly number[], rows));
    const grouped = numeric ? groupNumbers(keys as readonly number[]) : groupTagged(keys);
    const { entryOf, entries } = grouped;
    // Encoded rows per entry: counts first, then lists for keys with several rows.
    const counts = new Int32Array(entries);
    const last = new Int32Array(entries);
    for (let i = 0; i < keys.length; i++) {
      const entry = entryOf[i] as number;
      counts[entry] = (counts[entry] as number) + 1;
      last[entry] = rows[i] as number;
    }
    const encoded = new Int32Array(entries);
    let lists = 0;
    let listed = 0;
    for (let entry = 0; entry < entries; entry++) {
      const count = counts[entry] as number;
      if (unique || count === 1) encoded[entry] = (last[entry] as number) + 1;
      else {
        encoded[entry] = -++lists;
        listed += count;
      }
    }
    const listStarts = sharedArray(Uint32Array, lists + 1);
    const listRows = sharedArray(Int32Array, listed);
    if (lists > 0) {
      let at = 0;
      for (let entry = 0; entry < entries; entry++) {
        const value = encoded[entry] as number;
        if (value >= 0) continue;
        listStarts[-value - 1] = at;
        at += counts[entry] as number;
      }
      listStarts[lists] = at;
      const fill = new Uint32Array(lists);
      for (let i = 0; i < keys.length; i++) {
        const value = encoded[entryOf[i] as number] as number;
        if (value >= 0) continue;
        const list = -value - 1;
        listRows[(listStarts[list] as number) + (fill[list] as number)] = rows[i] as number;
        fill[list] = (fill[list] as number) + 1;
      }
    }
    return new KeyTable(grouped.finish(encoded, listStarts, listRows));
  }
}

/** A primary key's table in one pass: no key has several rows (the last one wins). */
function uniqueNumbers(keys: readonly number[], rows: ArrayLike<number>): SharedKeyTable {
  const capacity = capacityFor(keys.length);
  const mask = capacity - 1;
  const slotKeys = sharedArray(Float64Array, capacity);
  const slotValues = sharedArray(Int32Array, capacity);
  let size = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as number;
    let slot = hashNumber(key) & mask;
    while (slotValues[slot] !== 0 && slotKeys[slot] !== key) slot = (slot + 1) & mask;
    if (slotValues[slot] === 0) size++;
    slotKeys[slot] = key;
    slotValues[slot] = (rows[i] as number) + 1;
  }
  return {
    size,
    mask,
    slotKeys,
    slotValues,
    slots: null,
    keyBytes: null,
    listStarts: sharedArray(Uint32Array, 1),
    listRows: sharedArray(Int32Array, 0),
  };
}

interface Grouped {
  /** Each pair's entry (distinct key, numbered in order of first appearance). */
  readonly entryOf: Int32Array;
  readonly entries: number;
  finish(encoded: Int32Array, listStarts: Uint32Array, listRows: Int32Array): SharedKeyTable;
}

function groupNumbers(keys: readonly number[]): Grouped {
  // Grown as distinct keys appear: a foreign key has far fewer of them than rows.
  let capacity = 16;
  let mask = capacity - 1;
  let slotKeys = new Float64Array(capacity);
  let slotValues = new Int32Array(capacity);
  const entryOf = new Int32Array(keys.length);
  const entryKeys: number[] = [];
  const place = (key: number, value: number) => {
    let slot = hashNumber(key) & mask;
    while (slotValues[slot] !== 0) slot = (slot + 1) & mask;
    slotKeys[slot] = key;
    slotValues[slot] = value;
  };
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as number;
    let slot = hashNumber(key) & mask;
    for (;;) {
      const value = slotValues[slot] as number;
      if (value === 0) {
        entryKeys.push(key);
        entryOf[i] = entryKeys.length - 1;
        if (entryKeys.length > capacity * MAX_LOAD) {
          capacity *= 2;
          mask = capacity - 1;
          slotKeys = new Float64Array(capacity);
          slotValues = new Int32Array(capacity);
          entryKeys.forEach((entryKey, entry) => {
            place(entryKey, entry + 1);
          });
        } else {
          slotKeys[slot] = key;
          slotValues[slot] = entryKeys.length;
        }
        break;
      }
      if (slotKeys[slot] === key) {
        entryOf[i] = value - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  const entries = entryKeys.length;
  return {
    entryOf,
    entries,
    finish(encoded, listStarts, listRows) {
      const sharedKeys = sharedCopy(slotKeys);
      const sharedValues = sharedArray(Int32Array, capacity);
      for (let slot = 0; slot < capacity; slot++) {
        const entry = slotValues[slot] as number;
        if (entry !== 0) sharedValues[slot] = encoded[entry - 1] as number;
      }
      return {
        size: entries,
        mask,
        slotKeys: sharedKeys,
        slotValues: sharedValues,
        slots: null,
        keyBytes: null,
        listStarts,
        listRows,
      };
    },
  };
}

function groupTagged(keys: readonly Key[]): Grouped {
  const capacity = capacityFor(keys.length);
  const mask = capacity - 1;
  const slotEntries = new Int32Array(capacity);
  const slotHashes = new Int32Array(capacity);
  const entryOf = new Int32Array(keys.length);
  const entryHashes: number[] = [];
  const offsets: number[] = [0];
  let bytes = new Uint8Array(1024);
  let used = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as Key;
    const tag = tagOf(key);
    const body = bodyOf(key);
    const hash = hashText(tag, body);
    let slot = hash & mask;
    for (;;) {
      const entry = slotEntries[slot] as number;
      if (entry === 0) {
        if (used + 1 + body.length * 3 > bytes.length) {
          let size = bytes.length * 2;
          while (size < used + 1 + body.length * 3) size *= 2;
          const next = new Uint8Array(size);
          next.set(bytes.subarray(0, used));
          bytes = next;
        }
        bytes[used] = tag;
        used += 1 + encoder.encodeInto(body, bytes.subarray(used + 1)).written;
        offsets.push(used);
        entryHashes.push(hash);
        slotEntries[slot] = entryHashes.length;
        slotHashes[slot] = hash;
        entryOf[i] = entryHashes.length - 1;
        break;
      }
      if (slotHashes[slot] === hash) {
        const start = offsets[entry - 1] as number;
        if (bytes[start] === tag && utf8Equals(bytes, start + 1, offsets[entry] as number, body)) {
          entryOf[i] = entry - 1;
          break;
        }
      }
      slot = (slot + 1) & mask;
    }
  }
  const entries = entryHashes.length;
  return {
    entryOf,
    entries,
    finish(encoded, listStarts, listRows) {
      const capacity = capacityFor(entries);
      const mask = capacity - 1;
      const slots = sharedArray(Int32Array, capacity * 3);
      const keyBytes = sharedArray(Uint8Array, used + 4 * entries);
      let written = 0;
      for (let entry = 0; entry < entries; entry++) {
        const start = offsets[entry] as number;
        const end = offsets[entry + 1] as number;
        const length = end - start - 1;
        const hash = entryHashes[entry] as number;
        let slot = hash & mask;
        while (slots[slot * 3 + 1] !== 0) slot = (slot + 1) & mask;
        slots[slot * 3] = hash;
        slots[slot * 3 + 1] = written + 1;
        slots[slot * 3 + 2] = encoded[entry] as number;
        keyBytes[written] = bytes[start] as number;
        keyBytes[written + 1] = length & 255;
        keyBytes[written + 2] = (length >>> 8) & 255;
        keyBytes[written + 3] = (length >>> 16) & 255;
        keyBytes[written + 4] = length >>> 24;
        keyBytes.set(bytes.subarray(start + 1, end), written + 5);
        written += 5 + length;
      }
      return {
        size: entries,
        mask,
        slotKeys: null,
        slotValues: null,
        slots,
        keyBytes,
        listStarts,
        listRows,
      };
    },
  };
}
