import type { SharedGeneration } from './shared-generation.ts';

/**
 * A generation as bytes, for a checkpoint on disk: its structure as JSON, and the memory its
 * typed arrays view, each shared buffer once (two arrays over one buffer share it again when
 * decoded, as the columns and indexes that share one do now; an array over a plain buffer is
 * written alone, its own bytes only). What a checkpoint file holds is
 * the instance's business; this is the lossless part: numbers JSON cannot write (NaN,
 * infinities, -0), bigints, maps and sets are tagged, and a buffer comes back shared when it
 * was.
 */
export interface EncodedGeneration {
  /** The generation's structure, its arrays replaced by references into `buffers`. */
  readonly structure: string;
  /** The distinct buffers the arrays view, in the order the references number them. */
  readonly buffers: readonly Uint8Array[];
}

/** The tag of a value JSON cannot carry; no key of the engine's structures starts with NUL. */
const TAG = '\u0000';

type TypedArrayName =
  | 'Int8Array'
  | 'Uint8Array'
  | 'Uint8ClampedArray'
  | 'Int16Array'
  | 'Uint16Array'
  | 'Int32Array'
  | 'Uint32Array'
  | 'Float32Array'
  | 'Float64Array'
  | 'BigInt64Array'
  | 'BigUint64Array';

const TYPED_ARRAYS: Record<
  TypedArrayName,
  new (
    buffer: ArrayBufferLike,
    byteOffset: number,
    length: number,
  ) => ArrayBufferView
> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};

/** The constructor name of a typed array (a Buffer is written as the Uint8Array it is). */
function typedArrayName(view: ArrayBufferView): TypedArrayName {
  if (view instanceof Uint8Array) return 'Uint8Array';
  const name = view.constructor.name;
  if (name in TYPED_ARRAYS) return name as TypedArrayName;
  throw new TypeError(`A generation cannot hold a ${name}.`);
}

export function encodeGeneration(generation: SharedGeneration): EncodedGeneration {
  const buffers: Uint8Array[] = [];
  const sharedIndexes = new Map<SharedArrayBuffer, number>();
  const indexOf = (buffer: SharedArrayBuffer): number => {
    let index = sharedIndexes.get(buffer);
    if (index === undefined) {
      index = buffers.length;
      sharedIndexes.set(buffer, index);
      buffers.push(new Uint8Array(buffer));
    }
    return index;
  };
  const encode = (value: unknown): unknown => {
    if (typeof value === 'number') {
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      return { [TAG]: 'number', value: Object.is(value, -0) ? '-0' : String(value) };
    }
    if (typeof value === 'bigint') return { [TAG]: 'bigint', value: value.toString() };
    if (value === null || typeof value !== 'object') return value;
    if (ArrayBuffer.isView(value)) {
      const length = 'length' in value ? (value.length as number) : value.byteLength;
      const type = typedArrayName(value);
      if (!(value.buffer instanceof SharedArrayBuffer)) {
        // Only the array's own bytes: a plain buffer may be a pool that small Buffers share
        // (Node's), and the rest of it is other data, which a checkpoint must not hold.
        const index = buffers.length;
        buffers.push(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
        return { [TAG]: 'array', type, buffer: index, shared: false, byteOffset: 0, length };
      }
      return {
        [TAG]: 'array',
        type,
        buffer: indexOf(value.buffer),
        shared: true,
        byteOffset: value.byteOffset,
        length,
      };
    }
    if (Array.isArray(value)) return value.map(encode);
    if (value instanceof Map) {
      return {
        [TAG]: 'map',
        entries: [...value].map(([key, entry]) => [encode(key), encode(entry)]),
      };
    }
    if (value instanceof Set) return { [TAG]: 'set', values: [...value].map(encode) };
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      throw new TypeError(`A generation cannot hold a ${value.constructor?.name ?? 'class'}.`);
    }
    const out: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (key.startsWith(TAG)) throw new TypeError('A generation key starts with NUL.');
      if (entry !== undefined) out[key] = encode(entry);
    }
    return out;
  };
  const structure = JSON.stringify(encode(generation));
  return { structure, buffers };
}

function wholeSharedBuffer(bytes: Uint8Array): boolean {
  return (
    bytes.buffer instanceof SharedArrayBuffer &&
    bytes.byteOffset === 0 &&
    bytes.byteLength === bytes.buffer.byteLength
  );
}

/**
 * The generation `encodeGeneration` wrote. `buffers` are its buffers' bytes, in order. A buffer
 * that was shared and is given as the whole of a SharedArrayBuffer is used as it is (a reader
 * that reads each buffer into its own SharedArrayBuffer holds every byte once); any other is
 * copied into a new buffer (shared when it was), so those inputs can be reused or dropped.
 */
export function decodeGeneration(
  structure: string,
  buffers: readonly Uint8Array[],
): SharedGeneration {
  const made = new Map<number, ArrayBufferLike>();
  const bufferOf = (index: number, shared: boolean): ArrayBufferLike => {
    let buffer = made.get(index);
    if (!buffer) {
      const bytes = buffers[index];
      if (!bytes) throw new RangeError(`The checkpoint has no buffer ${index}.`);
      if (shared && wholeSharedBuffer(bytes)) {
        buffer = bytes.buffer;
      } else {
        buffer = shared
          ? new SharedArrayBuffer(bytes.byteLength)
          : new ArrayBuffer(bytes.byteLength);
        new Uint8Array(buffer).set(bytes);
      }
      made.set(index, buffer);
    }
    return buffer;
  };
  const decode = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) return value.map(decode);
    const record = value as Record<string, unknown>;
    switch (record[TAG]) {
      case undefined: {
        const out: Record<string, unknown> = {};
        for (const [key, entry] of Object.entries(record)) out[key] = decode(entry);
        return out;
      }
      case 'number':
        return record.value === '-0' ? -0 : Number(record.value);
      case 'bigint':
        return BigInt(record.value as string);
      case 'map':
        return new Map(
          (record.entries as [unknown, unknown][]).map(([key, entry]) => [
            decode(key),
            decode(entry),
          ]),
        );
      case 'set':
        return new Set((record.values as unknown[]).map(decode));
      case 'array': {
        const make = TYPED_ARRAYS[record.type as TypedArrayName];
        if (!make) throw new TypeError(`Unknown array type ${String(record.type)}.`);
        const buffer = bufferOf(record.buffer as number, record.shared === true);
        return new make(buffer, record.byteOffset as number, record.length as number);
      }
      default:
        throw new TypeError(`Unknown tag ${String(record[TAG])}.`);
    }
  };
  return decode(JSON.parse(structure)) as SharedGeneration;
}
