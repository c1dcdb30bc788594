import type { ColumnChunk } from './column-chunk.ts';

/**
 * The smallest and largest non-NULL value of one numeric column chunk (a DECIMAL stored as units:
 * in units), over every row it holds
 * (deleted ones too: a bound, not an exact range). A chunk with no non-NULL value has
 * `min` +Infinity and `max` -Infinity. Scans use it to skip chunks no row of which can pass a
 * comparison, or enter a top-K.
 */
export interface ZoneMap {
  readonly min: number;
  readonly max: number;
}

/** Chunks are immutable, so a zone map, once computed, holds for the chunk's life. */
const zoneMaps = new WeakMap<ColumnChunk, ZoneMap | null>();

/**
 * The zone map of `chunk`, computed on first use; null for text and boolean chunks, for
 * doubles that carry exact source text (their doubles only approximate the values), and for a
 * chunk holding a NaN, which compares like no number.
 */
export function zoneMap(chunk: ColumnChunk): ZoneMap | null {
  let zone = zoneMaps.get(chunk);
  if (zone === undefined) {
    zone = computeZoneMap(chunk);
    zoneMaps.set(chunk, zone);
  }
  return zone;
}

function computeZoneMap(chunk: ColumnChunk): ZoneMap | null {
  if (chunk.kind !== 'int32' && chunk.kind !== 'float64' && chunk.kind !== 'decimal') return null;
  if (chunk.kind !== 'int32' && chunk.exact !== null) return null;
  const values = chunk.values;
  const nulls = chunk.nulls;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let offset = 0; offset < values.length; offset++) {
    // `getBit` of bitmap.ts written out, as in every per-row scan.
    if (nulls !== null && ((nulls[offset >>> 3] as number) & (1 << (offset & 7))) !== 0) continue;
    const value = values[offset] as number;
    if (value < min) min = value;
    if (value > max) max = value;
    if (Number.isNaN(value)) return null;
  }
  return { min, max };
}
