import { Buffer } from 'node:buffer';
import { ReplicationError } from '../errors.ts';
import type { ReplicationPosition } from '../replication.ts';

const LSN_BYTES = 10;
const HEX_DIGITS = LSN_BYTES * 2;
const HEX = /^[0-9A-F]{20}$/;
/** `0000002A:000001C8:0003`: virtual log file, log block and slot, as SQL Server prints them. */
const DISPLAY = /^([0-9A-F]{8}):([0-9A-F]{8}):([0-9A-F]{4})$/;

/**
 * A SQL Server log sequence number: 10 bytes, compared as an unsigned big-endian number (the
 * order `binary(10)` values sort in). Serialised as 20 uppercase hex digits, fixed width, so the
 * text sorts in log order too.
 */
export class MsSqlLsn implements ReplicationPosition {
  readonly backend = 'mssql';
  /** 20 uppercase hex digits. */
  readonly hex: string;

  private constructor(hex: string) {
    this.hex = hex;
  }

  /** The LSN in a `binary(10)` value as tedious delivers it. */
  static fromBytes(bytes: Uint8Array): MsSqlLsn {
    if (bytes.length !== LSN_BYTES) {
      throw new ReplicationError(
        'replication_failed',
        `A SQL Server LSN has ${LSN_BYTES} bytes, not ${bytes.length}.`,
      );
    }
    return new MsSqlLsn(Buffer.from(bytes).toString('hex').toUpperCase());
  }

  /**
   * Reads `serialize()`'s form back, and also accepts `0x`-prefixed hex (as SSMS shows a
   * `binary(10)`) and the `VLF:block:slot` notation, in either case.
   */
  static parse(text: string): MsSqlLsn {
    const upper = text.trim().toUpperCase();
    const hex = upper.startsWith('0X') ? upper.slice(2) : upper;
    if (HEX.test(hex)) return new MsSqlLsn(hex);
    const parts = DISPLAY.exec(upper);
    if (parts) return new MsSqlLsn(`${parts[1]}${parts[2]}${parts[3]}`);
    throw new ReplicationError(
      'replication_failed',
      `"${text}" is not a SQL Server LSN (${HEX_DIGITS} hex digits).`,
    );
  }

  /** `position` as an LSN; another backend's position is a caller's mistake. */
  static from(position: ReplicationPosition): MsSqlLsn {
    if (position instanceof MsSqlLsn) return position;
    if (position.backend === 'mssql') return MsSqlLsn.parse(position.serialize());
    throw new ReplicationError(
      'replication_failed',
      `A ${position.backend} position cannot be used with a SQL Server source.`,
    );
  }

  /** The LSN as a `binary(10)` parameter value. */
  get bytes(): Buffer {
    return Buffer.from(this.hex, 'hex');
  }

  /** All zeros: what the CDC functions return for "no such capture instance" or "no LSN yet". */
  get isZero(): boolean {
    return /^0+$/.test(this.hex);
  }

  compare(other: ReplicationPosition): number {
    const hex = MsSqlLsn.from(other).hex;
    // Fixed-width uppercase hex: string order is numeric order.
    return this.hex < hex ? -1 : this.hex > hex ? 1 : 0;
  }

  serialize(): string {
    return this.hex;
  }

  toString(): string {
    return `${this.hex.slice(0, 8)}:${this.hex.slice(8, 16)}:${this.hex.slice(16)}`;
  }
}
