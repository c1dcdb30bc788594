import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { civilFromDays } from '../storage/civil-date.ts';
import type { ColumnChunk, DictChunk } from '../storage/column-chunk.ts';
import { isNullAt } from '../storage/column-reader.ts';
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
 * dictionary entries from their encoding made once per chunk. The rest (decimals, timestamps,
 * binary) goes through `valueJson`.
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

function writeDate(out: JsonWriter, days: number): void {
  out.byte(0x22);
  out.write(civilFromDays(days));
  out.byte(0x22);
}
