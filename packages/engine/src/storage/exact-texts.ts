import { Buffer, isAscii } from 'node:buffer';
import { sharedArray, sharedBuffer } from './shared-arrays.ts';

/** Texts from which a look-up reads a bitmap first (`#presentBits`); fewer are searched. */
const BITS_FROM = 16;
/** `#present` of texts searched without a bitmap. */
const NO_BITS = new Uint8Array(0);

/** `ExactTexts` as structured-cloneable data over shared memory. */
export interface SharedExactTexts {
  /** Row offsets, ascending. */
  readonly offsets: Uint32Array;
  /** Where each text ends in `bytes` (it starts where the one before ends). */
  readonly ends: Uint32Array;
  /** The texts, ASCII (numbers as the source wrote them). */
  readonly bytes: Uint8Array;
}

/**
 * The source texts of the values of a float64 chunk a double cannot carry digit for digit
 * (see `Float64Chunk.exact`), by row offset, in shared memory: a table of BIGINT ids past 2^53
 * has one per row, and a Map of them would be copied by every thread. Read-only, Map-like.
 */
export class ExactTexts {
  readonly #offsets: Uint32Array;
  readonly #ends: Uint32Array;
  readonly #bytes: Buffer;
  #ascii: boolean | undefined;
  #present: Uint8Array | null = null;

  constructor(shared: SharedExactTexts) {
    this.#offsets = shared.offsets;
    this.#ends = shared.ends;
    const bytes = shared.bytes;
    this.#bytes = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** The texts of `texts` (offset → text); null when it is empty. */
  static of(texts: ReadonlyMap<number, string>): ExactTexts | null {
    if (texts.size === 0) return null;
    const entries = [...texts].sort((a, b) => a[0] - b[0]);
    let length = 0;
    for (const [, text] of entries) length += text.length;
    const offsets = sharedArray(Uint32Array, entries.length);
    const ends = sharedArray(Uint32Array, entries.length);
    const bytes = sharedBuffer(length);
    let end = 0;
    entries.forEach(([offset, text], i) => {
      offsets[i] = offset;
      end += bytes.write(text, end, 'latin1');
      ends[i] = end;
    });
    return new ExactTexts({ offsets, ends, bytes });
  }

  toShared(): SharedExactTexts {
    return { offsets: this.#offsets, ends: this.#ends, bytes: this.#bytes };
  }

  /** The texts' bytes, and the bitmap a look-up makes of them (`#presentBits`) as if made. */
  get byteSize(): number {
    const offsets = this.#offsets;
    const bitmap =
      offsets.length < BITS_FROM ? 0 : ((offsets[offsets.length - 1] as number) >>> 3) + 1;
    return offsets.byteLength + this.#ends.byteLength + this.#bytes.byteLength + bitmap;
  }

  get size(): number {
    return this.#offsets.length;
  }

  /** The position of `offset`'s text (for `start`, `end`), or -1 when it has none. */
  indexOf(offset: number): number {
    return this.#find(offset);
  }

  /** The bytes of every text; the one at position i spans `start(i) .. end(i)`. */
  get bytes(): Buffer {
    return this.#bytes;
  }

  start(i: number): number {
    return i === 0 ? 0 : (this.#ends[i - 1] as number);
  }

  end(i: number): number {
    return this.#ends[i] as number;
  }

  /** Whether every text is ASCII (its latin1 bytes then are its UTF-8), found on first ask. */
  get ascii(): boolean {
    if (this.#ascii === undefined) this.#ascii = isAscii(this.#bytes);
    return this.#ascii;
  }

  #find(offset: number): number {
    const present = this.#present ?? this.#presentBits();
    if (present !== NO_BITS && ((present[offset >>> 3] ?? 0) & (1 << (offset & 7))) === 0)
      return -1;
    const offsets = this.#offsets;
    let low = 0;
    let high = offsets.length - 1;
    if (high < 0 || offset < (offsets[0] as number) || offset > (offsets[high] as number))
      return -1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = offsets[middle] as number;
      if (at === offset) return middle;
      if (at < offset) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  /**
   * A bit per row offset, set for the offsets with a text: made on the first look-up when there
   * are many texts, so most look-ups (a BIGINT column with one id in ten past 2^53) read a bit
   * instead of searching (a miss or more per step on a big table). 8 KiB for a chunk of 65536
   * rows, in each thread that reads the texts.
   */
  #presentBits(): Uint8Array {
    const offsets = this.#offsets;
    if (offsets.length < BITS_FROM) {
      this.#present = NO_BITS;
      return NO_BITS;
    }
    const present = new Uint8Array(((offsets[offsets.length - 1] as number) >>> 3) + 1);
    for (let i = 0; i < offsets.length; i++) {
      const offset = offsets[i] as number;
      present[offset >>> 3] = (present[offset >>> 3] as number) | (1 << (offset & 7));
    }
    this.#present = present;
    return present;
  }

  #text(i: number): string {
    const start = i === 0 ? 0 : (this.#ends[i - 1] as number);
    return this.#bytes.toString('latin1', start, this.#ends[i] as number);
  }

  get(offset: number): string | undefined {
    const i = this.#find(offset);
    return i < 0 ? undefined : this.#text(i);
  }

  has(offset: number): boolean {
    return this.#find(offset) >= 0;
  }

  *entries(): IterableIterator<[number, string]> {
    for (let i = 0; i < this.#offsets.length; i++)
      yield [this.#offsets[i] as number, this.#text(i)];
  }

  *values(): IterableIterator<string> {
    for (let i = 0; i < this.#offsets.length; i++) yield this.#text(i);
  }

  [Symbol.iterator](): IterableIterator<[number, string]> {
    return this.entries();
  }
}
