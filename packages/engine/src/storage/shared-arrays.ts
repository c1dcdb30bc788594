import { Buffer } from 'node:buffer';

/**
 * Typed arrays over `SharedArrayBuffer`s: a structured clone to a worker thread shares their
 * memory instead of copying it, so every thread reads one copy of the snapshot. Every array a
 * chunk or an index keeps is allocated here; scratch arrays of builders need not be.
 */

type TypedArray = Int32Array | Float64Array | Uint8Array | Uint16Array | Uint32Array;

type TypedArrayOf<T extends TypedArray> = new (
  buffer: SharedArrayBuffer,
  byteOffset: number,
  length: number,
) => T;

export function sharedArray<T extends TypedArray>(
  type: TypedArrayOf<T> & { readonly BYTES_PER_ELEMENT: number },
  length: number,
): T {
  return new type(new SharedArrayBuffer(length * type.BYTES_PER_ELEMENT), 0, length);
}

/** Zero-filled bytes as a Buffer (text chunks read them with `toString`). */
export function sharedBuffer(length: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(length), 0, length);
}

/** A shared copy of `array` (or of the first `length` elements). */
export function sharedCopy<T extends TypedArray>(array: T, length = array.length): T {
  const type = array.constructor as TypedArrayOf<T> & { readonly BYTES_PER_ELEMENT: number };
  const copy = sharedArray(type, length);
  copy.set(length === array.length ? array : array.subarray(0, length));
  return copy;
}

/** A shared copy of the first `length` bytes of `bytes`, as a Buffer. */
export function sharedBufferCopy(bytes: Uint8Array, length = bytes.length): Buffer {
  const copy = sharedBuffer(length);
  copy.set(length === bytes.length ? bytes : bytes.subarray(0, length));
  return copy;
}

export function isShared(array: ArrayBufferView): boolean {
  return array.buffer instanceof SharedArrayBuffer;
}
