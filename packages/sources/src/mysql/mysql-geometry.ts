import { SourceError } from '../errors.ts';

/**
 * A spatial value as the binlog carries it (the server's internal form: a 4-byte SRID, then
 * WKB) to the WKT text the snapshot reads through `ST_AsText`, in MariaDB's spelling:
 * `POINT(1 2)`, `MULTIPOINT(1 1,2 2)`, `GEOMETRYCOLLECTION EMPTY`.
 */

const NAMES = [
  '',
  'POINT',
  'LINESTRING',
  'POLYGON',
  'MULTIPOINT',
  'MULTILINESTRING',
  'MULTIPOLYGON',
  'GEOMETRYCOLLECTION',
];

/**
 * A coordinate as MariaDB prints it: the shortest digits that read back as the same double,
 * in plain notation from 1e-15 to below 1e15 and as `1.5e15` / `1e-16` beyond.
 */
export function wktNumber(value: number): string {
  const [mantissa = '0', exponentText = '0'] = value.toExponential().split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const exponent = Number(exponentText);
  if (digits === '0') return '0';
  const sign = negative ? '-' : '';
  if (exponent < -15 || exponent > 14) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    return `${sign}${digits[0]}${fraction}e${exponent}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = exponent + 1;
  if (digits.length <= whole) return sign + digits.padEnd(whole, '0');
  return `${sign}${digits.slice(0, whole)}.${digits.slice(whole)}`;
}

class WkbReader {
  readonly #view: DataView;
  #at: number;
  #littleEndian = true;

  constructor(bytes: Uint8Array, start: number) {
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#at = start;
  }

  /** Reads a geometry's byte-order mark and type. */
  header(): number {
    this.#littleEndian = this.#view.getUint8(this.#at) === 1;
    this.#at += 1;
    return this.uint32();
  }

  uint32(): number {
    const value = this.#view.getUint32(this.#at, this.#littleEndian);
    this.#at += 4;
    return value;
  }

  point(): string {
    const x = this.#view.getFloat64(this.#at, this.#littleEndian);
    const y = this.#view.getFloat64(this.#at + 8, this.#littleEndian);
    this.#at += 16;
    return `${wktNumber(x)} ${wktNumber(y)}`;
  }

  points(): string {
    const count = this.uint32();
    return Array.from({ length: count }, () => this.point()).join(',');
  }

  rings(): string {
    const count = this.uint32();
    return Array.from({ length: count }, () => `(${this.points()})`).join(',');
  }

  /** The body of a geometry of `type`, without its name. */
  body(type: number): string {
    switch (type) {
      case 1:
        return this.point();
      case 2:
        return this.points();
      case 3:
        return this.rings();
      case 4:
        return this.parts(() => {
          this.header();
          return this.point();
        });
      case 5:
        return this.parts(() => {
          this.header();
          return `(${this.points()})`;
        });
      case 6:
        return this.parts(() => {
          this.header();
          return `(${this.rings()})`;
        });
      default:
        return this.parts(() => this.geometry());
    }
  }

  parts(part: () => string): string {
    const count = this.uint32();
    return Array.from({ length: count }, part).join(',');
  }

  geometry(): string {
    const type = this.header();
    const name = NAMES[type];
    if (!name) throw invalid(`geometry type ${type}`);
    // Only a collection can be empty in MariaDB; it prints as `GEOMETRYCOLLECTION EMPTY`.
    if (type >= 4 && this.#view.getUint32(this.#at, this.#littleEndian) === 0) {
      this.#at += 4;
      return `${name} EMPTY`;
    }
    return `${name}(${this.body(type)})`;
  }
}

function invalid(what: string): SourceError {
  return new SourceError('source_value_invalid', `Unexpected ${what} in a binlog spatial value.`);
}

/** SRID + WKB (as the binlog stores a spatial column) to WKT. */
export function mySqlGeometryText(bytes: Uint8Array): string {
  try {
    return new WkbReader(bytes, 4).geometry();
  } catch (error) {
    if (error instanceof RangeError) throw invalid('end');
    throw error;
  }
}
