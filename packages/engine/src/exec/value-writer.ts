import { Buffer } from 'node:buffer';
import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { civilFromDays, timestampDigits } from '../storage/civil-date.ts';
import type { ColumnChunk, DictChunk } from '../storage/column-chunk.ts';
import { isNullAt } from '../storage/column-reader.ts';
import type { ExactTexts } from '../storage/exact-texts.ts';
import type { JsonWriter } from './json-writer.ts';
import { valueJson } from './value-json.ts';

const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

/** A dictionary's entries as JSON in UTF-8, entry i at `bytes[starts[i] .. starts[i + 1])`. */
interface EncodedDictionary {
  readonly bytes: Buffer;
  readonly starts: Uint32Array;
}

/** Made once per chunk (chunks are immutable), on the first value written from it. */
const encodedDictionaries = new WeakMap<DictChunk, EncodedDictionary>();

function encodedDictionary(chunk: DictChunk, asIs: boolean): EncodedDictionary {
  let encoded = encodedDictionaries.get(chunk);
  if (encoded === undefined) {
    // An array's stored text already is its JSON; other text is quoted.
    const texts = chunk.dictionary.map((entry) => (asIs ? entry : JSON.stringify(entry)));
    const starts = new Uint32Array(texts.length + 1);
    let length = 0;
    texts.forEach((text, i) => {
      starts[i] = length;
      length += Buffer.byteLength(text);
    });
    starts[texts.length] = length;
    const bytes = Buffer.allocUnsafe(length);
    texts.forEach((text, i) => {
      bytes.write(text, starts[i] as number);
    });
    encoded = { bytes, starts };
    encodedDictionaries.set(chunk, encoded);
  }
  return encoded;
}

/**
 * Writes the JSON of one stored value into `out`, the text `valueJson` gives (docs/instance-api.md,
 * "Data types"), as bytes where it can: numbers as digits, text copied from the chunk's UTF-8,
 * dictionary entries from their encoding made once per chunk, decimals from their units. The
 * rest (kept source texts, timestamps, binary) goes through `valueJson`.
 */
export function writeValue(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (isNullAt(chunk, offset)) {
    out.bytes(NULL);
    return;
  }
  switch (chunk.kind) {
    case 'int32': {
      const value = chunk.values[offset] as number;
      if (column.type === 'date') writeDate(out, value);
      else out.number(value);
      return;
    }
    case 'float64': {
      const type = column.type;
      if (type === 'int' || type === 'float' || type === 'time' || type === 'bigint') {
        if (type === 'bigint' && chunk.exact?.has(offset)) break;
        const value = chunk.values[offset] as number;
        if (Number.isFinite(value)) out.number(value);
        else out.bytes(NULL);
        return;
      }
      if (type === 'date') {
        writeDate(out, chunk.values[offset] as number);
        return;
      }
      break;
    }
    case 'decimal': {
      // NaN units: the source text is kept (`exact`), which `valueJson` gives.
      const units = chunk.values[offset] as number;
      if (!Number.isSafeInteger(units)) break;
      out.units(units, chunk.scale);
      return;
    }
    case 'bool':
      out.bytes(chunk.values[offset] === 1 ? TRUE : FALSE);
      return;
    case 'dict': {
      const { bytes, starts } = encodedDictionary(chunk, column.type === 'array');
      const code = chunk.codes[offset] as number;
      out.bytes(bytes, starts[code], starts[code + 1]);
      return;
    }
    case 'bytes': {
      if (chunk.encoding === 'raw') break;
      const start = chunk.offsets[offset] as number;
      const end = chunk.offsets[offset + 1] as number;
      // An array's stored text already is its JSON: written as is, not as a string.
      if (column.type === 'array') out.bytes(chunk.bytes, start, end);
      else out.jsonString(chunk.bytes, start, end);
      return;
    }
  }
  out.write(valueJson(column, chunk, offset));
}

/** Writes one stored value of a column into an answer, as `writeValue` does. */
export type ValueWriter = (
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
) => void;

/**
 * The writer for values of `column`: `writeValue`, or one function per type that expects the
 * storage its type has (so the property reads in each see few chunk shapes and stay fast), and
 * hands anything else to `writeValue`. A plan picks each column's writer once.
 */
export function valueWriter(column: CompiledColumn): ValueWriter {
  switch (column.type) {
    case 'int':
    case 'bigint':
    case 'float':
    case 'time':
      return writeNumeric;
    case 'string':
    case 'json':
      return writeText;
    case 'date':
      return writeDateValue;
    case 'timestamp':
      return writeTimestampValue;
    case 'decimal':
      return writeDecimal;
    default:
      return writeValue;
  }
}

function writeNumeric(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (chunk.kind === 'int32') {
    if (isNullAt(chunk, offset)) out.bytes(NULL);
    else out.int32(chunk.values[offset] as number);
    return;
  }
  if (chunk.kind === 'float64') {
    if (isNullAt(chunk, offset)) {
      out.bytes(NULL);
      return;
    }
    // A BIGINT past 2^53 keeps its text beside the double (`exact`): that one is written as kept.
    const exact = chunk.exact;
    if (exact !== null && column.type === 'bigint' && writeExact(out, exact, offset)) return;
    const value = chunk.values[offset] as number;
    if (Number.isFinite(value)) out.number(value);
    else out.bytes(NULL);
    return;
  }
  writeValue(out, column, chunk, offset);
}

/**
 * Writes the text `exact` keeps for `offset` (a number's source digits, its JSON as it is) and
 * returns true; false, writing nothing, when it keeps none.
 */
function writeExact(out: JsonWriter, exact: ExactTexts, offset: number): boolean {
  const i = exact.indexOf(offset);
  if (i < 0) return false;
  if (exact.ascii) out.bytes(exact.bytes, exact.start(i), exact.end(i));
  else out.write(exact.bytes.toString('latin1', exact.start(i), exact.end(i)));
  return true;
}

/**
 * A DECIMAL: its units written as digits with the point (`formatUnits`'s text), or the source
 * text kept for the rows whose units are NaN (see `DecimalChunk`).
 */
function writeDecimal(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (chunk.kind === 'decimal') {
    if (isNullAt(chunk, offset)) {
      out.bytes(NULL);
      return;
    }
    const units = chunk.values[offset] as number;
    if (Number.isSafeInteger(units)) {
      out.units(units, chunk.scale);
      return;
    }
  }
  writeValue(out, column, chunk, offset);
}

function writeText(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (chunk.kind === 'dict') {
    if (isNullAt(chunk, offset)) out.bytes(NULL);
    else {
      const { bytes, starts } = encodedDictionary(chunk, false);
      const code = chunk.codes[offset] as number;
      out.bytes(bytes, starts[code], starts[code + 1]);
    }
    return;
  }
  if (chunk.kind === 'bytes' && chunk.encoding === 'utf8') {
    if (isNullAt(chunk, offset)) out.bytes(NULL);
    else
      out.jsonString(
        chunk.bytes,
        chunk.offsets[offset] as number,
        chunk.offsets[offset + 1] as number,
      );
    return;
  }
  writeValue(out, column, chunk, offset);
}

function writeDateValue(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (chunk.kind === 'int32') {
    if (isNullAt(chunk, offset)) out.bytes(NULL);
    else writeDate(out, chunk.values[offset] as number);
    return;
  }
  writeValue(out, column, chunk, offset);
}

/** `timestampText` (storage/civil-date.ts) as a JSON string, written as bytes. */
function writeTimestampValue(
  out: JsonWriter,
  column: CompiledColumn,
  chunk: ColumnChunk,
  offset: number,
): void {
  if (chunk.kind === 'float64' && !isNullAt(chunk, offset)) {
    const micros = chunk.values[offset] as number;
    if (out.timestamp(micros, timestampDigits(column.precision, micros))) return;
  }
  writeValue(out, column, chunk, offset);
}

function writeDate(out: JsonWriter, days: number): void {
  if (out.date(days)) return;
  out.byte(0x22);
  out.write(civilFromDays(days));
  out.byte(0x22);
}
