import type { Comparable } from '../storage/comparable.ts';

/** Bits of one double, read through a shared view: a number's hash. */
const bits = new Float64Array(1);
const halves = new Int32Array(bits.buffer);

const EMPTY_CAPACITY = 16;
/** Integers in a window of 2^20 values around the first one go to a paged bitmap. */
const WINDOW_BITS = 20;
const PAGE_BITS = 12;
const PAGES = 1 << (WINDOW_BITS - PAGE_BITS);

/**
 * The distinct values COUNT(DISTINCT) has seen in one group: doubles in an open-addressing hash
 * table of their own (a `Set` of numbers costs several times more per value, in time and in
 * memory), any other key (text, bigint, boolean) in a `Set`. A number and a key of another type
 * are never the same value (`numericComparable` gives each value one form), so the two parts
 * never overlap. Numbers compare as `Set` compares them: NaN equals NaN, -0 equals 0. Integers
 * near the first one seen (ids, dates, amounts: most columns counted) are bits of a bitmap
 * whose 512-byte pages are made as values reach them, denser than any table and read in cache.
 */
export class DistinctValues {
  #keys = new Float64Array(EMPTY_CAPACITY);
  #used = new Uint8Array(EMPTY_CAPACITY);
  /** Numbers in the table. */
  #numbers = 0;
  /** The bitmap's first value, set by the first integer; its pages, and the bits set in them. */
  #base = Number.NaN;
  #pages: (Uint32Array | undefined)[] | null = null;
  #bits = 0;
  #others: Set<Comparable> | null = null;

  get size(): number {
    return this.#numbers + this.#bits + (this.#others?.size ?? 0);
  }

  /** Adds `key`; true when it was not there yet. */
  add(key: Comparable): boolean {
    if (typeof key === 'number') return this.addNumber(key);
    this.#others ??= new Set();
    const size = this.#others.size;
    this.#others.add(key);
    return this.#others.size !== size;
  }

  /** `add` of a number. */
  addNumber(value: number): boolean {
    if (Number.isInteger(value)) {
      // -0 is an integer too, and lands on 0's bit.
      if (this.#pages === null) {
        this.#base = value - (1 << (WINDOW_BITS - 1));
        this.#pages = new Array(PAGES);
      }
      const index = value - this.#base;
      if (index >= 0 && index < 1 << WINDOW_BITS) {
        const pageIndex = index >>> PAGE_BITS;
        let page = this.#pages[pageIndex];
        if (page === undefined) {
          page = new Uint32Array(1 << (PAGE_BITS - 5));
          this.#pages[pageIndex] = page;
        }
        const word = (index >>> 5) & ((1 << (PAGE_BITS - 5)) - 1);
        const bit = 1 << (index & 31);
        if ((page[word]! & bit) !== 0) return false;
        page[word] = page[word]! | bit;
        this.#bits++;
        return true;
      }
    }
    return this.#addToTable(value);
  }

  #addToTable(value: number): boolean {
    // One form for the values a Set takes as one: 0 and -0, every NaN.
    const key = value === 0 ? 0 : Number.isNaN(value) ? Number.NaN : value;
    const mask = this.#keys.length - 1;
    let slot = hash(key) & mask;
    for (;;) {
      if (this.#used[slot] === 0) break;
      const stored = this.#keys[slot]!;
      if (stored === key || (Number.isNaN(stored) && Number.isNaN(key))) return false;
      slot = (slot + 1) & mask;
    }
    this.#keys[slot] = key;
    this.#used[slot] = 1;
    this.#numbers++;
    // At most half full: probes stay short.
    if (this.#numbers * 2 > this.#keys.length) this.#grow();
    return true;
  }

  #grow(): void {
    const keys = this.#keys;
    const used = this.#used;
    this.#keys = new Float64Array(keys.length * 2);
    this.#used = new Uint8Array(keys.length * 2);
    const mask = this.#keys.length - 1;
    for (let i = 0; i < keys.length; i++) {
      if (used[i] === 0) continue;
      const key = keys[i]!;
      let slot = hash(key) & mask;
      while (this.#used[slot] !== 0) slot = (slot + 1) & mask;
      this.#keys[slot] = key;
      this.#used[slot] = 1;
    }
  }
}

/** A double's bits mixed into a table index (Fibonacci hashing of both halves). */
function hash(key: number): number {
  bits[0] = key;
  return Math.imul((halves[0]! ^ Math.imul(halves[1]!, 0x85ebca6b)) >>> 0, 0x9e3779b1) >>> 7;
}
