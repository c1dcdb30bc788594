import type { Buffer } from 'node:buffer';
import { ReplicationError } from '../errors.ts';
import type { ReplicationPosition } from '../replication.ts';

const SERIALIZED_PREFIX = 'postgres:';
const MAX_LSN = (1n << 64n) - 1n;

function invalid(text: string): ReplicationError {
  return new ReplicationError(
    'replication_failed',
    `Not a PostgreSQL replication position: ${JSON.stringify(text.slice(0, 40))}.`,
  );
}

/**
 * A PostgreSQL WAL position (log sequence number): a 64-bit byte offset into the write-ahead
 * log. PostgreSQL writes it as two hex halves, `16/B374D848`; serialised, it is `postgres:`
 * and 16 upper-case hex digits, so that serialised positions sort as strings in WAL order.
 */
export class Lsn implements ReplicationPosition {
  readonly backend = 'postgres';
  readonly value: bigint;

  constructor(value: bigint) {
    if (value < 0n || value > MAX_LSN) throw new RangeError('An LSN is an unsigned 64-bit number.');
    this.value = value;
  }

  /** Reads PostgreSQL's own notation (`0/16B3748`, as `pg_lsn` prints) or `serialize()`'s. */
  static parse(text: string): Lsn {
    if (text.startsWith(SERIALIZED_PREFIX)) {
      const hex = text.slice(SERIALIZED_PREFIX.length);
      if (!/^[0-9A-F]{16}$/.test(hex)) throw invalid(text);
      return new Lsn(BigInt(`0x${hex}`));
    }
    const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
    if (!match) throw invalid(text);
    return new Lsn((BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`));
  }

  /** `position` as an LSN; a position of another backend is refused. */
  static of(position: ReplicationPosition): Lsn {
    if (position instanceof Lsn) return position;
    throw new ReplicationError(
      'replication_failed',
      `A PostgreSQL source cannot use a ${position.backend} position.`,
    );
  }

  /** Reads the 8-byte big-endian LSN at `offset`, as the replication protocol sends it. */
  static read(buffer: Buffer, offset: number): Lsn {
    return new Lsn(buffer.readBigUInt64BE(offset));
  }

  compare(other: ReplicationPosition): number {
    if (!(other instanceof Lsn)) {
      throw new TypeError(`A PostgreSQL position cannot be compared with a ${other.backend} one.`);
    }
    return this.value < other.value ? -1 : this.value > other.value ? 1 : 0;
  }

  /** The later of two positions (either when equal). */
  max(other: Lsn): Lsn {
    return other.value > this.value ? other : this;
  }

  serialize(): string {
    return SERIALIZED_PREFIX + this.value.toString(16).toUpperCase().padStart(16, '0');
  }

  /** Positions in logs and JSON read as their serialised form (a bigint has no JSON). */
  toJSON(): string {
    return this.serialize();
  }

  toString(): string {
    const high = (this.value >> 32n).toString(16).toUpperCase();
    const low = (this.value & 0xffff_ffffn).toString(16).toUpperCase();
    return `${high}/${low}`;
  }
}

/** `0/0`: PostgreSQL's InvalidXLogRecPtr, "no position". */
export const NO_LSN = new Lsn(0n);
