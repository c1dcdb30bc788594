import type { Buffer } from 'node:buffer';
import { ReplicationError } from '../errors.ts';
import { Lsn } from './postgres-position.ts';

/**
 * A decoder for the `pgoutput` logical replication protocol, version 1 (PostgreSQL 10+):
 * https://www.postgresql.org/docs/current/protocol-logicalrep-message-formats.html
 *
 * Values stay the server's text (`t` columns): the converters in `postgres-types.ts` turn them
 * into canonical forms exactly as they do for the snapshot's text. Decoding copies everything
 * it keeps out of the buffer, which node-postgres may reuse for later network data.
 */

/** A column value as sent: text, SQL NULL, or `undefined` for an unchanged TOASTed value. */
export type TupleValue = string | null | undefined;

export interface RelationColumn {
  readonly name: string;
  readonly typeOid: number;
  readonly typeMod: number;
  /** Part of the replica identity (the primary key, the identity index, or every column for FULL). */
  readonly isKey: boolean;
}

export type PgoutputMessage =
  | { readonly tag: 'begin'; readonly finalLsn: Lsn; readonly xid: number }
  | { readonly tag: 'commit'; readonly commitLsn: Lsn; readonly endLsn: Lsn }
  | {
      readonly tag: 'relation';
      readonly relationId: number;
      readonly schema: string;
      readonly name: string;
      readonly columns: readonly RelationColumn[];
    }
  | { readonly tag: 'insert'; readonly relationId: number; readonly after: TupleValue[] }
  | {
      readonly tag: 'update';
      readonly relationId: number;
      /** `key`: the old replica identity only (other columns NULL); `old`: the whole old row. */
      readonly beforeKind: 'key' | 'old' | null;
      readonly before: TupleValue[] | null;
      readonly after: TupleValue[];
    }
  | {
      readonly tag: 'delete';
      readonly relationId: number;
      readonly beforeKind: 'key' | 'old';
      readonly before: TupleValue[];
    }
  | { readonly tag: 'truncate'; readonly relationIds: readonly number[] }
  /** Origin, Type and logical decoding Message: nothing a change stream needs. */
  | { readonly tag: 'ignored' };

function malformed(detail: string): ReplicationError {
  return new ReplicationError(
    'replication_failed',
    `The replication stream sent a message this connector cannot read (${detail}).`,
  );
}

class Reader {
  readonly #buffer: Buffer;
  #offset = 0;

  constructor(buffer: Buffer) {
    this.#buffer = buffer;
  }

  #need(bytes: number): number {
    const at = this.#offset;
    if (at + bytes > this.#buffer.length) throw malformed('message cut short');
    this.#offset = at + bytes;
    return at;
  }

  byte(): number {
    return this.#buffer[this.#need(1)]!;
  }

  int16(): number {
    return this.#buffer.readInt16BE(this.#need(2));
  }

  int32(): number {
    return this.#buffer.readInt32BE(this.#need(4));
  }

  uint32(): number {
    return this.#buffer.readUInt32BE(this.#need(4));
  }

  lsn(): Lsn {
    return Lsn.read(this.#buffer, this.#need(8));
  }

  skip(bytes: number): void {
    this.#need(bytes);
  }

  /** A NUL-terminated UTF-8 string. */
  cstring(): string {
    const start = this.#offset;
    const end = this.#buffer.indexOf(0, start);
    if (end < 0) throw malformed('unterminated string');
    this.#offset = end + 1;
    return this.#buffer.toString('utf8', start, end);
  }

  text(length: number): string {
    const start = this.#need(length);
    return this.#buffer.toString('utf8', start, start + length);
  }
}

const TAG = {
  begin: 0x42, // B
  commit: 0x43, // C
  origin: 0x4f, // O
  relation: 0x52, // R
  type: 0x59, // Y
  insert: 0x49, // I
  update: 0x55, // U
  delete: 0x44, // D
  truncate: 0x54, // T
  message: 0x4d, // M
} as const;

const NEW_TUPLE = 0x4e; // N
const KEY_TUPLE = 0x4b; // K
const OLD_TUPLE = 0x4f; // O

function tuple(reader: Reader): TupleValue[] {
  const count = reader.int16();
  const values = new Array<TupleValue>(count);
  for (let i = 0; i < count; i++) {
    const kind = reader.byte();
    if (kind === 0x74 /* t */) values[i] = reader.text(reader.int32());
    else if (kind === 0x6e /* n */) values[i] = null;
    else if (kind === 0x75 /* u */) values[i] = undefined;
    else throw malformed(`column value kind ${kind}`); // 'b' (binary) is never asked for
  }
  return values;
}

function expectNewTuple(reader: Reader): TupleValue[] {
  if (reader.byte() !== NEW_TUPLE) throw malformed('no new row');
  return tuple(reader);
}

function relation(reader: Reader): PgoutputMessage {
  const relationId = reader.uint32();
  const schema = reader.cstring();
  const name = reader.cstring();
  reader.skip(1); // replica identity setting: the key flags below say all we need
  const count = reader.int16();
  const columns: RelationColumn[] = [];
  for (let i = 0; i < count; i++) {
    const flags = reader.byte();
    columns.push({
      name: reader.cstring(),
      typeOid: reader.uint32(),
      typeMod: reader.int32(),
      isKey: (flags & 1) === 1,
    });
  }
  return { tag: 'relation', relationId, schema, name, columns };
}

function update(reader: Reader): PgoutputMessage {
  const relationId = reader.uint32();
  const kind = reader.byte();
  if (kind === NEW_TUPLE) {
    return { tag: 'update', relationId, beforeKind: null, before: null, after: tuple(reader) };
  }
  if (kind !== KEY_TUPLE && kind !== OLD_TUPLE) throw malformed(`update row kind ${kind}`);
  const before = tuple(reader);
  const after = expectNewTuple(reader);
  const beforeKind = kind === KEY_TUPLE ? 'key' : 'old';
  return { tag: 'update', relationId, beforeKind, before, after };
}

function remove(reader: Reader): PgoutputMessage {
  const relationId = reader.uint32();
  const kind = reader.byte();
  if (kind !== KEY_TUPLE && kind !== OLD_TUPLE) throw malformed(`delete row kind ${kind}`);
  const beforeKind = kind === KEY_TUPLE ? 'key' : 'old';
  return { tag: 'delete', relationId, beforeKind, before: tuple(reader) };
}

function truncate(reader: Reader): PgoutputMessage {
  const count = reader.int32();
  reader.skip(1); // CASCADE / RESTART IDENTITY: the affected tables are listed either way
  const relationIds: number[] = [];
  for (let i = 0; i < count; i++) relationIds.push(reader.uint32());
  return { tag: 'truncate', relationIds };
}

/** Decodes one pgoutput message (the payload of one XLogData message). */
export function decodePgoutput(payload: Buffer): PgoutputMessage {
  const reader = new Reader(payload);
  const tag = reader.byte();
  switch (tag) {
    case TAG.begin: {
      const finalLsn = reader.lsn();
      reader.skip(8); // commit timestamp
      return { tag: 'begin', finalLsn, xid: reader.uint32() };
    }
    case TAG.commit: {
      reader.skip(1); // flags, unused
      return { tag: 'commit', commitLsn: reader.lsn(), endLsn: reader.lsn() };
    }
    case TAG.relation:
      return relation(reader);
    case TAG.insert: {
      const relationId = reader.uint32();
      return { tag: 'insert', relationId, after: expectNewTuple(reader) };
    }
    case TAG.update:
      return update(reader);
    case TAG.delete:
      return remove(reader);
    case TAG.truncate:
      return truncate(reader);
    case TAG.origin:
    case TAG.type:
    case TAG.message:
      return { tag: 'ignored' };
    default:
      throw malformed(`message type ${tag}`);
  }
}
