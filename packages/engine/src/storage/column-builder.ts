import { Buffer } from 'node:buffer';
import type { ColumnType } from '../source-schema.ts';
import { bitmapBytes, getBit, setBit } from './bitmap.ts';
import { parseCivilDate } from './civil-date.ts';
import type { ColumnChunk } from './column-chunk.ts';
import { numericComparable } from './comparable.ts';
import { storedUnits, unitScaleOf } from './decimal-units.ts';
import { ExactTexts } from './exact-texts.ts';
import { isPlainNumberText, plainNumberValue } from './plain-number-text.ts';
import { sharedBufferCopy, sharedCopy } from './shared-arrays.ts';

/** Above this many distinct values in a chunk, text is stored flat instead of as a dictionary. */
export const MAX_DICTIONARY = 4096;
const encoder = new TextEncoder();
/** Flat text rows encoded together (see `#flushTexts`). */
const PENDING_TEXTS = 1024;

type Mode = 'int32' | 'float64' | 'decimal' | 'bool' | 'dict' | 'bytes';

function initialMode(type: ColumnType): Mode {
  switch (type) {
    case 'int':
    case 'date':
      return 'int32';
    case 'bigint':
    case 'float':
    case 'decimal':
    case 'timestamp':
    case 'time':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'string':
    case 'json':
    case 'array':
      return 'dict';
    case 'binary':
      return 'bytes';
  }
}

function grow<T extends Int32Array | Float64Array | Uint8Array | Uint16Array | Uint32Array>(
  array: T,
  needed: number,
): T {
  if (needed <= array.length) return array;
  let size = Math.max(array.length * 2, 64);
  while (size < needed) size *= 2;
  const next = new (array.constructor as new (n: number) => T)(size);
  next.set(array);
  return next;
}

/**
 * Accumulates one column's values for one chunk (values in their canonical source form, see
 * `ColumnType`) and produces the compact `ColumnChunk`: int32 widening to float64 when a value
 * does not fit, dictionary text switching to flat UTF-8 when the values are too varied.
 */
export class ColumnBuilder {
  readonly type: ColumnType;
  readonly scale: number | undefined;
  /** The scale of a DECIMAL's units (decimal-units.ts); undefined for other columns. */
  readonly #unitScale: number | undefined;
  #mode: Mode;
  #length = 0;
  #nulls: Uint8Array | null = null;
  #int32 = new Int32Array(0);
  #float64 = new Float64Array(0);
  #bool = new Uint8Array(0);
  #exact: Map<number, string> | null = null;
  #codes = new Uint16Array(0);
  #dictionary: string[] = [];
  #dictionaryCodes = new Map<string, number>();
  #bytes: Buffer = Buffer.alloc(0);
  #offsets = new Uint32Array(1);
  #byteLength = 0;
  /** Flat text rows not yet encoded ('' for NULL), from row `#pendingFirst` on: see `#flushTexts`. */
  #pending: string[] = [];
  #pendingFirst = 0;

  constructor(type: ColumnType, scale?: number) {
    this.type = type;
    this.scale = scale;
    this.#unitScale = unitScaleOf(type, scale);
    this.#mode = this.#unitScale === undefined ? initialMode(type) : 'decimal';
  }

  get length(): number {
    return this.#length;
  }

  /**
   * Appends `rows[start, end)[column]`, as a load does: a column of a batch at a time. Number
   * columns take loops of their own over an array grown once: through `append`, whose code V8
   * compiles for every type's values, a number costs several times more.
   */
  appendColumn(
    rows: readonly (readonly unknown[])[],
    column: number,
    start: number,
    end: number,
  ): void {
    let r = start;
    if (this.type === 'float' || this.type === 'timestamp' || this.type === 'time') {
      const first = this.#length;
      const values = grow(this.#float64, first + end - start);
      this.#float64 = values;
      for (; r < end; r++) {
        const value = (rows[r] as readonly unknown[])[column];
        const row = first + r - start;
        if (value === null || value === undefined) this.#markNull(row);
        else values[row] = Number(value);
      }
      this.#length = first + end - start;
      return;
    }
    if (this.type === 'int' && this.#mode === 'int32') {
      const first = this.#length;
      const values = grow(this.#int32, first + end - start);
      this.#int32 = values;
      for (; r < end; r++) {
        const value = (rows[r] as readonly unknown[])[column];
        const row = first + r - start;
        if (value === null || value === undefined) this.#markNull(row);
        else if (typeof value === 'number' && (value | 0) === value) values[row] = value;
        else break; // past 32 bits (or not a number): `append` widens the column
        this.#length = row + 1;
      }
    }
    for (; r < end; r++) this.append((rows[r] as readonly unknown[])[column]);
  }

  append(value: unknown): void {
    const row = this.#length;
    this.#length = row + 1;
    if (value === null || value === undefined) {
      this.#markNull(row);
      this.#appendPlaceholder(row);
      return;
    }
    switch (this.type) {
      case 'int':
        this.#appendNumber(row, Number(value));
        return;
      case 'float':
      case 'time':
      case 'timestamp':
        this.#appendFloat(row, Number(value));
        return;
      case 'bigint':
      case 'decimal':
        if (this.#mode === 'decimal') this.#appendUnits(row, String(value));
        else this.#appendExactNumber(row, String(value));
        return;
      case 'date': {
        const days = parseCivilDate(String(value));
        if (days === undefined) {
          this.#markNull(row);
          this.#appendPlaceholder(row);
        } else this.#appendNumber(row, days);
        return;
      }
      case 'boolean':
        this.#bool = grow(this.#bool, row + 1);
        this.#bool[row] = value ? 1 : 0;
        return;
      case 'string':
      case 'json':
      case 'array':
        this.#appendText(row, typeof value === 'string' ? value : String(value));
        return;
      case 'binary':
        this.#appendRaw(row, value instanceof Uint8Array ? value : Buffer.from(String(value)));
        return;
    }
  }

  #markNull(row: number): void {
    if (!this.#nulls) this.#nulls = new Uint8Array(Math.max(64, this.#int32.length >>> 3));
    this.#nulls = grow(this.#nulls, bitmapBytes(row + 1));
    setBit(this.#nulls, row);
  }

  #appendPlaceholder(row: number): void {
    switch (this.#mode) {
      case 'int32':
        this.#int32 = grow(this.#int32, row + 1);
        return;
      case 'float64':
      case 'decimal':
        this.#float64 = grow(this.#float64, row + 1);
        return;
      case 'bool':
        this.#bool = grow(this.#bool, row + 1);
        return;
      case 'dict':
        this.#codes = grow(this.#codes, row + 1);
        return;
      case 'bytes':
        // NULL text is empty text in the flat form (and must queue behind the pending rows).
        if (this.type !== 'binary') {
          this.#appendText(row, '');
          return;
        }
        this.#offsets = grow(this.#offsets, row + 2);
        this.#offsets[row + 1] = this.#byteLength;
        return;
    }
  }

  #appendNumber(row: number, value: number): void {
    if (this.#mode === 'int32') {
      if ((value | 0) === value) {
        this.#int32 = grow(this.#int32, row + 1);
        this.#int32[row] = value;
        return;
      }
      this.#float64 = Float64Array.from(this.#int32.subarray(0, row));
      this.#mode = 'float64';
    }
    this.#appendFloat(row, value);
  }

  #appendFloat(row: number, value: number): void {
    this.#float64 = grow(this.#float64, row + 1);
    this.#float64[row] = value;
  }

  #appendExactNumber(row: number, text: string): void {
    // Most BIGINTs: a char-code scan gives the double and proves the text needs no keeping. (A
    // DECIMAL here has a scale no scan proves, or none: its scaled ones are stored as units.)
    const plain = this.type === 'bigint' ? plainNumberValue(text, 0) : Number.NaN;
    if (!Number.isNaN(plain)) {
      this.#appendFloat(row, plain);
      return;
    }
    const value = Number(text);
    this.#appendFloat(row, value);
    // Kept when the double would print other digits, or compares as another integer (past
    // 2^53, `String` may print the source digits of a double that is not that integer).
    if (printsOtherwise(value, text, this.type, this.scale)) {
      if (!this.#exact) this.#exact = new Map();
      this.#exact.set(row, text);
    }
  }

  /** A DECIMAL as its units (decimal-units.ts); its text kept when the units do not say it all. */
  #appendUnits(row: number, text: string): void {
    const units = storedUnits(text, this.#unitScale as number);
    this.#appendFloat(row, units);
    if (Number.isNaN(units)) {
      if (!this.#exact) this.#exact = new Map();
      this.#exact.set(row, text);
    }
  }

  #appendText(row: number, text: string): void {
    if (this.#mode === 'dict') {
      let code = this.#dictionaryCodes.get(text);
      if (code === undefined) {
        if (this.#dictionary.length >= MAX_DICTIONARY) {
          this.#switchToBytes(row);
          this.#appendText(row, text);
          return;
        }
        code = this.#dictionary.length;
        this.#dictionary.push(text);
        this.#dictionaryCodes.set(text, code);
      }
      this.#codes = grow(this.#codes, row + 1);
      this.#codes[row] = code;
      return;
    }
    if (this.#pending.length === 0) this.#pendingFirst = row;
    this.#pending.push(text);
    if (this.#pending.length >= PENDING_TEXTS) this.#flushTexts();
  }

  /**
   * Encodes the pending rows. Encoding text by text costs a native call each, more than the
   * copy; joined, a run of ASCII rows (the common case) is one copy, its offsets the lengths.
   */
  #flushTexts(): void {
    const texts = this.#pending;
    if (texts.length === 0) return;
    this.#pending = [];
    const first = this.#pendingFirst;
    this.#offsets = grow(this.#offsets, first + texts.length + 1);
    const joined = texts.join('');
    // One byte per character exactly when every character is ASCII.
    if (Buffer.byteLength(joined, 'utf8') === joined.length) {
      this.#bytes = growBuffer(this.#bytes, this.#byteLength + joined.length);
      this.#bytes.write(joined, this.#byteLength, 'latin1');
      let end = this.#byteLength;
      for (let i = 0; i < texts.length; i++) {
        end += (texts[i] as string).length;
        this.#offsets[first + i + 1] = end;
      }
      this.#byteLength = end;
      return;
    }
    for (let i = 0; i < texts.length; i++) {
      const text = texts[i] as string;
      this.#bytes = growBuffer(this.#bytes, this.#byteLength + text.length * 3);
      const { written } = encoder.encodeInto(text, this.#bytes.subarray(this.#byteLength));
      this.#byteLength += written;
      this.#offsets[first + i + 1] = this.#byteLength;
    }
  }

  #appendRaw(row: number, value: Uint8Array): void {
    this.#bytes = growBuffer(this.#bytes, this.#byteLength + value.length);
    this.#bytes.set(value, this.#byteLength);
    this.#byteLength += value.length;
    this.#offsets = grow(this.#offsets, row + 2);
    this.#offsets[row + 1] = this.#byteLength;
  }

  /** Re-encodes the rows so far (before `row`) as flat UTF-8. */
  #switchToBytes(row: number): void {
    const codes = this.#codes;
    const dictionary = this.#dictionary;
    const nulls = this.#nulls;
    this.#mode = 'bytes';
    this.#dictionary = [];
    this.#dictionaryCodes = new Map();
    this.#codes = new Uint16Array(0);
    for (let i = 0; i < row; i++) {
      const isNull = nulls !== null && getBit(nulls, i);
      this.#appendText(i, isNull ? '' : (dictionary[codes[i] as number] as string));
    }
  }

  /** The chunk, its arrays copied to shared memory (see shared-arrays.ts). */
  finish(): ColumnChunk {
    this.#flushTexts();
    const n = this.#length;
    const nulls = this.#nulls ? sharedCopy(this.#nulls, bitmapBytes(n)) : null;
    switch (this.#mode) {
      case 'int32':
        return { kind: 'int32', values: sharedCopy(grow(this.#int32, n), n), nulls };
      case 'float64':
        return {
          kind: 'float64',
          values: sharedCopy(grow(this.#float64, n), n),
          exact: this.#exact && ExactTexts.of(this.#exact),
          nulls,
        };
      case 'decimal':
        return {
          kind: 'decimal',
          values: sharedCopy(grow(this.#float64, n), n),
          scale: this.#unitScale as number,
          exact: this.#exact && ExactTexts.of(this.#exact),
          nulls,
        };
      case 'bool':
        return { kind: 'bool', values: sharedCopy(grow(this.#bool, n), n), nulls };
      case 'dict':
        return {
          kind: 'dict',
          codes: sharedCopy(grow(this.#codes, n), n),
          dictionary: this.#dictionary,
          nulls,
        };
      case 'bytes':
        return {
          kind: 'bytes',
          encoding: this.type === 'binary' ? 'raw' : 'utf8',
          bytes: sharedBufferCopy(this.#bytes, this.#byteLength),
          offsets: sharedCopy(grow(this.#offsets, n + 1), n + 1),
          nulls,
        };
    }
  }
}

function growBuffer(buffer: Buffer, needed: number): Buffer {
  if (needed <= buffer.length) return buffer;
  let size = Math.max(buffer.length * 2, 1024);
  while (size < needed) size *= 2;
  const next = Buffer.allocUnsafe(size);
  buffer.copy(next);
  return next;
}

/**
 * The JSON number text the engine writes for a stored double of a `bigint` or `decimal`
 * column (decimals keep their declared scale: `12.50`). A source value whose text differs is
 * kept exactly beside the double.
 */
export function formatStoredNumber(
  value: number,
  type: ColumnType,
  scale: number | undefined,
): string {
  if (type === 'decimal' && scale !== undefined && Math.abs(value) < 1e21) {
    return value.toFixed(scale);
  }
  return String(value);
}

/** Whether a BIGINT/DECIMAL value's source text must be kept beside its double. */
export function needsExactText(
  value: number,
  text: string,
  type: ColumnType,
  scale: number | undefined,
): boolean {
  const digits = type === 'bigint' ? 0 : scale;
  if (digits !== undefined && isPlainNumberText(text, digits)) return false;
  return printsOtherwise(value, text, type, scale);
}

/**
 * `needsExactText` without its shortcut: the double prints other digits than `text`, or
 * `text` compares as an integer past 2^53 (for a text the shortcut already let through).
 */
function printsOtherwise(
  value: number,
  text: string,
  type: ColumnType,
  scale: number | undefined,
): boolean {
  return (
    formatStoredNumber(value, type, scale) !== text || typeof numericComparable(text) === 'bigint'
  );
}
