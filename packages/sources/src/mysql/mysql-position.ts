import { ReplicationError } from '../errors.ts';
import type { ReplicationPosition } from '../replication.ts';

const SERIALIZED_PREFIX = 'mysql:';
/** MySQL and MariaDB name binlog files `<base>.<sequence>`, the sequence at least 6 digits. */
const FILE_NAME = /^(.+)\.(\d{6,10})$/;
const SERIALIZED = /^mysql:(.+):(\d{10}):(\d{20})$/;
const NATIVE = /^(.+\.\d{6,10}):(\d{1,20})$/;

/** Both servers number files with `%06lu`: at least six digits. */
function sequenceSuffix(sequence: number): string {
  return String(sequence).padStart(6, '0');
}

function invalid(text: string): ReplicationError {
  return new ReplicationError(
    'replication_failed',
    `Not a MySQL binlog position: ${JSON.stringify(text.slice(0, 80))}.`,
  );
}

/**
 * A place in a MySQL / MariaDB binary log: a file name and the byte offset of the next event to
 * read in it. Files are numbered in the order the server writes them, so positions compare by
 * the file's sequence number, then the offset. Serialised as
 * `mysql:<base>:<10-digit sequence>:<20-digit offset>` (e.g.
 * `mysql:binlog:0000000003:00000000000000001234`), which sorts as a string in history order even
 * when the sequence outgrows six digits.
 */
export class BinlogPosition implements ReplicationPosition {
  readonly backend = 'mysql';
  /** The file name as the server reports it, e.g. `mysql-bin.000003`. */
  readonly file: string;
  /** The byte offset in `file` of the next event to read. */
  readonly offset: number;
  /** `file` without its sequence suffix, e.g. `mysql-bin`. */
  readonly base: string;
  /** `file`'s sequence number, e.g. 3. */
  readonly sequence: number;

  constructor(file: string, offset: number) {
    const match = FILE_NAME.exec(file);
    // The suffix must be the server's own spelling of its number, so that `parse(serialize())`
    // gives back this very file name.
    if (!match || file.includes('/') || match[2] !== sequenceSuffix(Number(match[2]))) {
      throw new RangeError(`Not a binlog file name: ${JSON.stringify(file)}.`);
    }
    if (!Number.isSafeInteger(offset) || offset < 0) {
      throw new RangeError('A binlog offset is a non-negative whole number.');
    }
    this.file = file;
    this.offset = offset;
    this.base = match[1]!;
    this.sequence = Number(match[2]);
  }

  /** Reads `serialize()`'s form, or the server's own `binlog.000003:1234`. */
  static parse(text: string): BinlogPosition {
    let file: string;
    let offset: number;
    const serialized = SERIALIZED.exec(text);
    if (serialized) {
      file = `${serialized[1]}.${sequenceSuffix(Number(serialized[2]))}`;
      offset = Number(serialized[3]);
    } else {
      const native = text.startsWith(SERIALIZED_PREFIX) ? null : NATIVE.exec(text);
      if (!native) throw invalid(text);
      file = native[1]!;
      offset = Number(native[2]);
    }
    try {
      return new BinlogPosition(file, offset);
    } catch {
      throw invalid(text);
    }
  }

  compare(other: ReplicationPosition): number {
    if (!(other instanceof BinlogPosition)) {
      throw new TypeError(`A MySQL position cannot be compared with a ${other.backend} one.`);
    }
    if (this.sequence !== other.sequence) return this.sequence < other.sequence ? -1 : 1;
    return this.offset < other.offset ? -1 : this.offset > other.offset ? 1 : 0;
  }

  serialize(): string {
    const sequence = String(this.sequence).padStart(10, '0');
    const offset = String(this.offset).padStart(20, '0');
    return `${SERIALIZED_PREFIX}${this.base}:${sequence}:${offset}`;
  }

  toString(): string {
    return `${this.file}:${this.offset}`;
  }
}
