import { Buffer } from 'node:buffer';
import type { CompiledColumn } from '../schema/compiled-schema.ts';
import { bitmapBytes, clearBit, setBit } from './bitmap.ts';
import { parseCivilDate } from './civil-date.ts';
import { ColumnBuilder, MAX_DICTIONARY, needsExactText } from './column-builder.ts';
import type { BytesChunk, ColumnChunk } from './column-chunk.ts';
import { readCanonical } from './column-reader.ts';
import { storedUnits } from './decimal-units.ts';
import { ExactTexts } from './exact-texts.ts';
import { sharedArray, sharedBuffer, sharedCopy } from './shared-arrays.ts';

const encoder = new TextEncoder();

function withNulls(
  nulls: Uint8Array | null,
  length: number,
  values: ReadonlyMap<number, unknown>,
): Uint8Array | null {
  let next: Uint8Array | null = null;
  for (const [offset, value] of values) {
    const isNull = value === null || value === undefined;
    if (isNull && !next)
      next = nulls ? sharedCopy(nulls) : sharedArray(Uint8Array, bitmapBytes(length));
    else if (!isNull && nulls && !next) next = sharedCopy(nulls);
    if (!next) continue;
    if (isNull) setBit(next, offset);
    else clearBit(next, offset);
  }
  return next ?? nulls;
}

/** Rebuilds a column chunk value by value: the slow, always-correct path. */
function rebuild(
  chunk: ColumnChunk,
  column: CompiledColumn,
  length: number,
  values: ReadonlyMap<number, unknown>,
): ColumnChunk {
  const builder = new ColumnBuilder(column.type, column.scale);
  for (let offset = 0; offset < length; offset++) {
    builder.append(
      values.has(offset)
        ? values.get(offset)
        : readCanonical(chunk, column.type, column.scale, offset),
    );
  }
  return builder.finish();
}

/** Replaces the values of `bytes` rows: copies the untouched runs between them whole. */
function replaceBytes(
  chunk: BytesChunk,
  length: number,
  values: ReadonlyMap<number, unknown>,
): BytesChunk {
  const encoded = new Map<number, Uint8Array | null>();
  let size = chunk.offsets[length] as number;
  for (const [offset, value] of values) {
    const bytes =
      value === null || value === undefined
        ? null
        : chunk.encoding === 'raw'
          ? value instanceof Uint8Array
            ? value
            : Buffer.from(String(value))
          : encoder.encode(String(value));
    encoded.set(offset, bytes);
    size +=
      (bytes?.length ?? 0) -
      ((chunk.offsets[offset + 1] as number) - (chunk.offsets[offset] as number));
  }
  const out = sharedBuffer(size);
  const offsets = sharedArray(Uint32Array, length + 1);
  const changed = [...encoded.keys()].sort((a, b) => a - b);
  let written = 0;
  let next = 0;
  const copyRun = (from: number, to: number) => {
    // Rows [from, to) keep their bytes: one copy, then their offsets shifted by one delta.
    if (from >= to) return;
    const start = chunk.offsets[from] as number;
    const end = chunk.offsets[to] as number;
    chunk.bytes.copy(out, written, start, end);
    const delta = written - start;
    for (let row = from; row < to; row++)
      offsets[row + 1] = (chunk.offsets[row + 1] as number) + delta;
    written += end - start;
  };
  for (const offset of changed) {
    copyRun(next, offset);
    const bytes = encoded.get(offset);
    if (bytes) {
      out.set(bytes, written);
      written += bytes.length;
    }
    offsets[offset + 1] = written;
    next = offset + 1;
  }
  copyRun(next, length);
  return {
    kind: 'bytes',
    encoding: chunk.encoding,
    bytes: out,
    offsets,
    nulls: withNulls(chunk.nulls, length, values),
  };
}

/**
 * A copy of one column chunk with the values of some rows replaced (canonical values by
 * offset), at the level of its typed arrays: an update costs a copy of the chunk's column, not
 * a row appended and a tombstone left behind. Values that do not fit the chunk's form (an
 * integer past 32 bits, a dictionary grown too large) fall back to rebuilding the column.
 */
export function replaceColumnValues(
  chunk: ColumnChunk,
  column: CompiledColumn,
  length: number,
  values: ReadonlyMap<number, unknown>,
): ColumnChunk {
  switch (chunk.kind) {
    case 'int32': {
      const next = sharedCopy(chunk.values);
      for (const [offset, value] of values) {
        if (value === null || value === undefined) continue;
        const number = column.type === 'date' ? parseCivilDate(String(value)) : Number(value);
        if (number === undefined || (number | 0) !== number)
          return rebuild(chunk, column, length, values);
        next[offset] = number;
      }
      return { kind: 'int32', values: next, nulls: withNulls(chunk.nulls, length, values) };
    }
    case 'float64': {
      const next = sharedCopy(chunk.values);
      const exactTyped = column.type === 'bigint' || column.type === 'decimal';
      // Changed in a Map, stored shared again at the end.
      let exact: Map<number, string> | null = null;
      for (const [offset, value] of values) {
        if (value === null || value === undefined) continue;
        if (column.type === 'date') return rebuild(chunk, column, length, values);
        const text = exactTyped ? String(value) : '';
        const number = Number(value);
        next[offset] = number;
        const keep = exactTyped && needsExactText(number, text, column.type, column.scale);
        exact = keptTexts(exact, chunk.exact, offset, keep ? text : null);
      }
      return {
        kind: 'float64',
        values: next,
        exact: exact === null ? chunk.exact : ExactTexts.of(exact),
        nulls: withNulls(chunk.nulls, length, values),
      };
    }
    case 'decimal': {
      const next = sharedCopy(chunk.values);
      let exact: Map<number, string> | null = null;
      for (const [offset, value] of values) {
        if (value === null || value === undefined) continue;
        const text = String(value);
        const units = storedUnits(text, chunk.scale);
        next[offset] = units;
        exact = keptTexts(exact, chunk.exact, offset, Number.isNaN(units) ? text : null);
      }
      return {
        kind: 'decimal',
        values: next,
        scale: chunk.scale,
        exact: exact === null ? chunk.exact : ExactTexts.of(exact),
        nulls: withNulls(chunk.nulls, length, values),
      };
    }
    case 'bool': {
      const next = sharedCopy(chunk.values);
      for (const [offset, value] of values)
        if (value !== null && value !== undefined) next[offset] = value ? 1 : 0;
      return { kind: 'bool', values: next, nulls: withNulls(chunk.nulls, length, values) };
    }
    case 'dict': {
      const codes = sharedCopy(chunk.codes);
      let dictionary = chunk.dictionary;
      let lookup: Map<string, number> | null = null;
      for (const [offset, value] of values) {
        if (value === null || value === undefined) continue;
        const text = String(value);
        if (!lookup) lookup = new Map(chunk.dictionary.map((entry, code) => [entry, code]));
        let code = lookup.get(text);
        if (code === undefined) {
          if (dictionary.length >= MAX_DICTIONARY) return rebuild(chunk, column, length, values);
          if (dictionary === chunk.dictionary) dictionary = [...chunk.dictionary];
          code = dictionary.length;
          (dictionary as string[]).push(text);
          lookup.set(text, code);
        }
        codes[offset] = code;
      }
      return { kind: 'dict', codes, dictionary, nulls: withNulls(chunk.nulls, length, values) };
    }
    case 'bytes':
      return replaceBytes(chunk, length, values);
  }
}

/**
 * A chunk's kept texts (`before`, the chunk's own) as changed so far (`changed`: null until a
 * change), with `offset`'s text now `text` (null: none kept): copied into a Map on the first
 * change, and left alone while nothing changes.
 */
function keptTexts(
  changed: Map<number, string> | null,
  before: ExactTexts | null,
  offset: number,
  text: string | null,
): Map<number, string> | null {
  if (text === null && !(changed ?? before)?.has(offset)) return changed;
  const exact = changed ?? new Map(before ?? []);
  if (text === null) exact.delete(offset);
  else exact.set(offset, text);
  return exact;
}
