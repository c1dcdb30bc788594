/**
 * Bit sets over row offsets, one bit a row, in plain byte arrays: null and deleted-row bitmaps.
 * The per-row scans of `exec/` and `isNullAt` write `getBit` out, which measured ~10% faster.
 */

export function bitmapBytes(rows: number): number {
  return (rows + 7) >>> 3;
}

export function getBit(bits: Uint8Array, index: number): boolean {
  return ((bits[index >>> 3] as number) & (1 << (index & 7))) !== 0;
}

export function setBit(bits: Uint8Array, index: number): void {
  bits[index >>> 3] = (bits[index >>> 3] as number) | (1 << (index & 7));
}

export function clearBit(bits: Uint8Array, index: number): void {
  bits[index >>> 3] = (bits[index >>> 3] as number) & ~(1 << (index & 7));
}
