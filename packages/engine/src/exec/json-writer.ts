import { Buffer } from 'node:buffer';
import { EngineError } from '../errors.ts';
import {
  MAX_NUMBER_BYTES,
  writeCivilDate,
  writeDigits,
  writeNumber,
  writePadded,
  writeTimestamp,
  writeUnits,
} from './json-number.ts';

/** Bytes gathered before they become a chunk: big enough to amortise, small enough to stream. */
const CHUNK_BYTES = 32 * 1024;
/** Texts up to this long are copied char by char; longer ones by `Buffer.write`. */
const SHORT_TEXT = 64;
/** Scratch buffers of finished writers, for the next ones (a query's answer is copied out). */
const spare: Scratch[] = [];

/** A scratch buffer, and a view of it for writes of 2 and 4 bytes at a time. */
interface Scratch {
  readonly bytes: Buffer;
  readonly view: DataView;
}

function newScratch(): Scratch {
  const bytes = Buffer.allocUnsafeSlow(CHUNK_BYTES + WORD_SLACK);
  return { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}
const MAX_SPARE = 8;

/** An answer as the buffers it was written in; never one string. */
export interface QueryAnswer {
  readonly chunks: readonly Buffer[];
  readonly bytes: number;
  /** The engine's time for the query (`meta.timing_ms`, planning included); 0 when not timed. */
  readonly timingMs: number;
  /** Rows in `data` (`meta.pagination.count`); 0 when not counted. */
  readonly rows: number;
  /** The whole answer as text (tools and tests; a server sends `chunks`). */
  text(): string;
}

/** Room past a chunk's bytes in the scratch buffer, for the last word of a `words` write. */
const WORD_SLACK = 4;

/**
 * Bytes as little-endian 32-bit words (zeros past `length`), written by `JsonWriter.words`, and
 * as they are, for a text too long to be worth copying word by word.
 */
export interface WordBytes {
  readonly words: Int32Array;
  readonly length: number;
  readonly bytes: Uint8Array;
}

/** `bytes` as `WordBytes`. */
export function wordBytes(bytes: Uint8Array): WordBytes {
  const padded = new Uint8Array(Math.ceil(bytes.length / 4) * 4);
  padded.set(bytes);
  const view = new DataView(padded.buffer);
  const words = new Int32Array(padded.length / 4);
  for (let i = 0; i < words.length; i++) words[i] = view.getInt32(i * 4, true);
  return { words, length: bytes.length, bytes: padded.subarray(0, bytes.length) };
}

/** JSON escapes of the bytes below 0x20 and of `"` and `\`, as `JSON.stringify` writes them. */
const ESCAPES: readonly Uint8Array[] = Array.from({ length: 0x60 }, (_, code) =>
  Buffer.from(JSON.stringify(String.fromCharCode(code)).slice(1, -1), 'latin1'),
);
/** 1 for the bytes `ESCAPES` holds an escape of. */
const ESCAPED = Uint8Array.from({ length: 256 }, (_, code) =>
  code < 0x20 || code === 0x22 || code === 0x5c ? 1 : 0,
);

/** Writes `source[start, end)` at `at`, escaped as `JSON.stringify` does; returns the end. */
function writeEscaped(
  scratch: Uint8Array,
  at: number,
  source: Uint8Array,
  start: number,
  end: number,
): number {
  let to = at;
  for (let i = start; i < end; i++) {
    const code = source[i] as number;
    if (ESCAPED[code] === 0) scratch[to++] = code;
    else {
      const escaped = ESCAPES[code] as Uint8Array;
      for (let e = 0; e < escaped.length; e++) scratch[to++] = escaped[e] as number;
    }
  }
  return to;
}

/**
 * Collects an answer's JSON as UTF-8 in chunks of about 32 KiB, counting bytes as it goes and
 * refusing, with `response_too_large`, the chunk that crosses the byte budget: a huge answer
 * stops being built within one chunk of the limit instead of exhausting the heap. Values are
 * written as bytes where they can be (`number`, `jsonString`, `bytes`): no string per value.
 * The bytes gather in a scratch buffer reused by later writers; each chunk is a copy of it.
 */
export class JsonWriter {
  readonly #maxBytes: number;
  readonly #chunks: Buffer[] = [];
  readonly #scratch: Buffer;
  /** The scratch buffer's bytes, for writes of 2 and 4 at a time. */
  readonly #view: DataView;
  /** Both, to be handed back to `spare`. */
  readonly #held: Scratch;
  #at = 0;
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    const scratch = spare.pop() ?? newScratch();
    this.#held = scratch;
    this.#scratch = scratch.bytes;
    this.#view = scratch.view;
  }

  /**
   * Bytes made into words once (`wordBytes`: a key's `,"key":`), written 4 at a time: half the
   * time of a byte-by-byte copy of a key.
   */
  words(source: WordBytes): void {
    const words = source.words;
    if (this.#at + source.length > CHUNK_BYTES) {
      this.#flush();
      if (source.length > CHUNK_BYTES) {
        this.#push(Buffer.from(source.bytes));
        return;
      }
    }
    const at = this.#at;
    // A long text (a plan's meta head) in one copy: past about 16 words, the copy's fixed cost
    // is less than the words'.
    if (source.length > SHORT_TEXT) {
      this.#scratch.set(source.bytes, at);
      this.#at = at + source.length;
      return;
    }
    const view = this.#view;
    // The last word's zeros past `length` land in the slack past the chunk's end at worst, and
    // are written over by what follows.
    for (let i = 0; i < words.length; i++) view.setInt32(at + i * 4, words[i] as number, true);
    this.#at = at + source.length;
  }

  /** Any text, as UTF-8. */
  write(text: string): void {
    const length = text.length;
    if (length > SHORT_TEXT) {
      this.#writeLong(text);
      return;
    }
    if (this.#at + length * 3 > CHUNK_BYTES) this.#flush();
    const scratch = this.#scratch;
    let at = this.#at;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) {
        // From the first non-ASCII character on (a character boundary), by the encoder.
        at += scratch.write(text.slice(i), at, 'utf8');
        break;
      }
      scratch[at++] = code;
    }
    this.#at = at;
  }

  /** One ASCII character, by its code. */
  byte(code: number): void {
    if (this.#at >= CHUNK_BYTES) this.#flush();
    this.#scratch[this.#at++] = code;
  }

  /** Bytes already encoded (a precompiled `"key":`, say). */
  bytes(source: Uint8Array, start = 0, end = source.length): void {
    const length = end - start;
    let at = this.#at;
    if (length > SHORT_TEXT || at + length > CHUNK_BYTES) {
      this.#longBytes(source, start, end);
      return;
    }
    // Short (keys, most values): copied byte by byte, in a function small enough to inline.
    const scratch = this.#scratch;
    for (let i = start; i < end; i++) scratch[at++] = source[i] as number;
    this.#at = at;
  }

  #longBytes(source: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (this.#at + length > CHUNK_BYTES) {
      this.#flush();
      if (length > CHUNK_BYTES) {
        this.#push(Buffer.from(source.subarray(start, end)));
        return;
      }
    }
    const scratch = this.#scratch;
    let at = this.#at;
    if (length <= SHORT_TEXT) for (let i = start; i < end; i++) scratch[at++] = source[i] as number;
    else {
      scratch.set(source.subarray(start, end), at);
      at += length;
    }
    this.#at = at;
  }

  /** A finite number as `String(value)` writes it. */
  number(value: number): void {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    const end = writeNumber(this.#scratch, this.#at, value);
    if (end < 0) this.write(String(value));
    else this.#at = end;
  }

  /** An integer of 32 bits (an int32 column's value) as `String(value)` writes it. */
  int32(value: number): void {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    const scratch = this.#scratch;
    let at = this.#at;
    let magnitude = value;
    if (value < 0) {
      scratch[at++] = 0x2d;
      magnitude = -value;
    }
    this.#at = writeDigits(scratch, at, magnitude);
  }

  /** An integer in [0, 10^digits) in exactly `digits` digits, zeros in front (clocks). */
  padded(value: number, digits: number): void {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    this.#at = writePadded(this.#scratch, this.#at, value, digits);
  }

  /** A DECIMAL's units at a scale of 0..22 (a safe integer count of 10^-scale), as `formatUnits`. */
  units(units: number, scale: number): void {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    this.#at = writeUnits(this.#scratch, this.#at, units, scale);
  }

  /**
   * A day number as the JSON string of `civilFromDays`'s text, for the years 0..9999 (see
   * `writeCivilDate`); false, writing nothing, for another number.
   */
  date(days: number): boolean {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    const end = writeCivilDate(this.#scratch, this.#at, days);
    if (end < 0) return false;
    this.#at = end;
    return true;
  }

  /**
   * Epoch microseconds as the JSON string of `timestampText`'s text (see `writeTimestamp`);
   * false, writing nothing, for a number it does not write.
   */
  timestamp(micros: number, fractionDigits: 3 | 6): boolean {
    if (this.#at + MAX_NUMBER_BYTES > CHUNK_BYTES) this.#flush();
    const end = writeTimestamp(this.#scratch, this.#at, micros, fractionDigits);
    if (end < 0) return false;
    this.#at = end;
    return true;
  }

  /**
   * UTF-8 text held as bytes (valid UTF-8: stored text always is) as a JSON string, escaped as
   * `JSON.stringify` escapes it: only `"`, `\` and the control characters below U+0020.
   */
  jsonString(source: Buffer, start: number, end: number): void {
    // Room for the worst case, every byte a `\u00XX`.
    const room = (end - start) * 6 + 2;
    if (this.#at + room > CHUNK_BYTES) {
      this.#flush();
      if (room > CHUNK_BYTES) {
        this.write(JSON.stringify(source.toString('utf8', start, end)));
        return;
      }
    }
    const scratch = this.#scratch;
    const view = this.#view;
    let at = this.#at;
    scratch[at++] = 0x22;
    let i = start;
    // Four bytes at a time while none of them needs an escape: the word's test has no false
    // negatives (SWAR: a byte below 0x20, or one equal to `"` or `\`, sets its top bit).
    for (; i + 4 <= end; i += 4) {
      const word =
        (source[i] as number) |
        ((source[i + 1] as number) << 8) |
        ((source[i + 2] as number) << 16) |
        ((source[i + 3] as number) << 24);
      const quote = word ^ 0x22222222;
      const backslash = word ^ 0x5c5c5c5c;
      if (
        (((word - 0x20202020) & ~word) |
          ((quote - 0x01010101) & ~quote) |
          ((backslash - 0x01010101) & ~backslash)) &
        0x80808080
      )
        at = writeEscaped(scratch, at, source, i, i + 4);
      else {
        view.setInt32(at, word, true);
        at += 4;
      }
    }
    at = writeEscaped(scratch, at, source, i, end);
    scratch[at++] = 0x22;
    this.#at = at;
  }

  finish(timingMs = 0, rows = 0): QueryAnswer {
    this.#flush();
    spare.length < MAX_SPARE && spare.push(this.#held);
    const chunks = this.#chunks;
    return {
      chunks,
      bytes: this.#bytes,
      timingMs,
      rows,
      text: () => Buffer.concat(chunks).toString('utf8'),
    };
  }

  #writeLong(text: string): void {
    const most = text.length * 3;
    if (this.#at + most > CHUNK_BYTES) {
      this.#flush();
      if (most > CHUNK_BYTES) {
        this.#push(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.#at += this.#scratch.write(text, this.#at, 'utf8');
  }

  #flush(): void {
    if (this.#at === 0) return;
    const chunk = Buffer.allocUnsafe(this.#at);
    this.#scratch.copy(chunk, 0, 0, this.#at);
    this.#at = 0;
    this.#push(chunk);
  }

  #push(chunk: Buffer): void {
    this.#bytes += chunk.length;
    if (this.#bytes > this.#maxBytes) {
      throw new EngineError(
        'response_too_large',
        `The answer would be larger than ${this.#maxBytes} bytes (query.max_response_bytes). Select fewer fields, lower LIMIT, or page with AFTER.`,
      );
    }
    this.#chunks.push(chunk);
  }
}
