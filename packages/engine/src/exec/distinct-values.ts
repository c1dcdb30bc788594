import type { Comparable } from '../storage/comparable.ts';

/** Bits of one double, read through a shared view: a number's hash. */
const bits = new Float64Array(1);
const halves = new Int32Array(bits.buffer);

const FIRST_CAPACITY = 16;
/** Numbers kept in a plain array before the table and bitmap are made. */
const SMALL = 8;
/** Integers in a window of 2^20 values around the first one go to a paged bitmap. */
const WINDOW_BITS = 20;
/** 1,024 values a page (128 bytes): a group of few values costs little. */
const PAGE_BITS = 10;
const PAGE_WORDS = 1 << (PAGE_BITS - 5);

/**
 * The distinct values COUNT(DISTINCT) has seen in one group: doubles in an open-addressing hash
 * table of their own (a `Set` of numbers costs several times more per value, in time and in
 * memory), any other key (text, bigint, boolean) in a `Set`. A number and a key of another type
 * are never the same value (`numericComparable` gives each value one form), so the two parts
 * never overlap. Numbers compare as `Set` compares them: NaN equals NaN, -0 equals 0. Integers
 * near the first one seen (ids, dates, amounts: most columns counted) are bits of a bitmap
 * whose 128-byte pages are made as values reach them, denser than any table and read in cache.
 * The first few numbers stay in a plain array and every part is made on first use: an
 * aggregation may hold a group per row, most with a value or two.
 */
export class DistinctValues {
  /** The first numbers, until there are more than `SMALL`; then null. */
  #small: number[] | null = [];
  #keys: Float64Array | null = null;
  #used: Uint8Array | null = null;
  /** Numbers in the table. */
  #numbers = 0;
  /** The bitmap's first value, set by the first integer; its pages, and the bits set in them. */
  #base = 0;
  #pages: Map<number, Uint32Array> | null = null;
  /** The page used last, and its number: values come clustered, a lookup is saved. */
  #lastPage: Uint32Array | null = null;
  #lastPageIndex = -1;
  #bits = 0;
  #others: Set<Comparable> | null = null;

  get size(): number {
    const small = this.#small?.length ?? 0;
    return small + this.#numbers + this.#bits + (this.#others?.size ?? 0);
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
    const small = this.#small;
    if (small !== null) {
      // One form for the values a Set takes as one: 0 and -0, every NaN.
      const key = value === 0 ? 0 : value;
      for (let i = 0; i < small.length; i++) {
        const seen = small[i]!;
        if (seen === key || (Number.isNaN(seen) && Number.isNaN(key))) return false;
      }
      if (small.length < SMALL) {
        small.push(key);
        return true;
      }
      this.#small = null;
      for (const seen of small) this.#addLarge(seen);
    }
    return this.#addLarge(value);
  }

  /** `addNumber` once the numbers are past the plain array. */
  #addLarge(value: number): boolean {
    if (Number.isInteger(value)) {
      // -0 is an integer too, and lands on 0's bit.
      if (this.#pages === null) {
        this.#base = value - (1 << (WINDOW_BITS - 1));
        this.#pages = new Map();
      }
      const index = value - this.#base;
      if (index >= 0 && index < 1 << WINDOW_BITS) return this.#addBit(index);
    }
    return this.#addToTable(value);
  }

  #addBit(index: number): boolean {
    const pageIndex = index >>> PAGE_BITS;
    let page = this.#lastPageIndex === pageIndex ? this.#lastPage : null;
    if (page === null) {
      const pages = this.#pages as Map<number, Uint32Array>;
      page = pages.get(pageIndex) ?? null;
      if (page === null) {
        page = new Uint32Array(PAGE_WORDS);
        pages.set(pageIndex, page);
      }
      this.#lastPage = page;
      this.#lastPageIndex = pageIndex;
    }
    const word = (index >>> 5) & (PAGE_WORDS - 1);
    const bit = 1 << (index & 31);
    if ((page[word]! & bit) !== 0) return false;
    page[word] = page[word]! | bit;
    this.#bits++;
    return true;
  }

  #addToTable(value: number): boolean {
    // One form for the values a Set takes as one: 0 and -0, every NaN.
    const key = value === 0 ? 0 : Number.isNaN(value) ? Number.NaN : value;
    if (this.#keys === null) {
      this.#keys = new Float64Array(FIRST_CAPACITY);
      this.#used = new Uint8Array(FIRST_CAPACITY);
    }
    const keys = this.#keys;
    const used = this.#used as Uint8Array;
    const mask = keys.length - 1;
    let slot = hash(key) & mask;
    for (;;) {
      if (used[slot] === 0) break;
      const stored = keys[slot]!;
      if (stored === key || (Number.isNaN(stored) && Number.isNaN(key))) return false;
      slot = (slot + 1) & mask;
    }
    keys[slot] = key;
    used[slot] = 1;
    this.#numbers++;
    // At most half full: probes stay short.
    if (this.#numbers * 2 > keys.length) this.#grow();
    return true;
  }

  #grow(): void {
    const keys = this.#keys as Float64Array;
    const used = this.#used as Uint8Array;
    const grown = new Float64Array(keys.length * 2);
    const grownUsed = new Uint8Array(keys.length * 2);
    const mask = grown.length - 1;
    for (let i = 0; i < keys.length; i++) {
      if (used[i] === 0) continue;
      const key = keys[i]!;
      let slot = hash(key) & mask;
      while (grownUsed[slot] !== 0) slot = (slot + 1) & mask;
      grown[slot] = key;
      grownUsed[slot] = 1;
    }
    this.#keys = grown;
    this.#used = grownUsed;
  }
}

/** A double's bits mixed into a table index (Fibonacci hashing of both halves). */
function hash(key: number): number {
  bits[0] = key;
  return Math.imul((halves[0]! ^ Math.imul(halves[1]!, 0x85ebca6b)) >>> 0, 0x9e3779b1) >>> 7;
}
