import { Buffer } from 'node:buffer';
import type { ColumnChunk } from './column-chunk.ts';
import type { Generation } from './generation.ts';
import type { Chunk } from './table-data.ts';

function sameBytes(a: ArrayBufferView | null, b: ArrayBufferView | null): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

function sameColumn(a: ColumnChunk, b: ColumnChunk): boolean {
  if (a.kind !== b.kind || !sameBytes(a.nulls, b.nulls)) return false;
  switch (a.kind) {
    case 'int32':
    case 'bool':
      return sameBytes(a.values, (b as typeof a).values);
    case 'float64':
    case 'decimal': {
      const other = b as typeof a;
      if (a.kind === 'decimal' && a.scale !== (other as typeof a).scale) return false;
      if (!sameBytes(a.values, other.values) || (a.exact?.size ?? 0) !== (other.exact?.size ?? 0))
        return false;
      for (const [offset, text] of a.exact ?? [])
        if (other.exact?.get(offset) !== text) return false;
      return true;
    }
    case 'dict': {
      const other = b as typeof a;
      return (
        sameBytes(a.codes, other.codes) &&
        a.dictionary.every((entry, i) => entry === other.dictionary[i])
      );
    }
    case 'bytes': {
      const other = b as typeof a;
      return sameBytes(a.offsets, other.offsets) && a.bytes.equals(other.bytes);
    }
  }
}

function sameChunk(a: Chunk, b: Chunk): boolean {
  return (
    a.length === b.length &&
    a.deletedCount === 0 &&
    b.deletedCount === 0 &&
    a.columns.every((column, i) => sameColumn(column, b.columns[i] as ColumnChunk))
  );
}

/**
 * Whether two generations hold the same rows in the same storage (a fresh load of unchanged
 * source data builds byte-identical chunks), compared with memcmp over the column arrays. Poll
 * mode uses it to skip a swap when nothing changed.
 */
export function sameContent(a: Generation, b: Generation): boolean {
  if (a.tables.size !== b.tables.size) return false;
  for (const [name, table] of a.tables) {
    const other = b.tables.get(name);
    if (!other || table.data.chunks.length !== other.data.chunks.length) return false;
    if (!table.data.chunks.every((chunk, i) => sameChunk(chunk, other.data.chunks[i] as Chunk)))
      return false;
  }
  return true;
}
