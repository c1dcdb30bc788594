import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { decodePgoutput } from '../src/postgres/postgres-pgoutput.ts';
import { Lsn } from '../src/postgres/postgres-position.ts';
import {
  standbyStatusUpdate,
  walMessage,
} from '../src/postgres/postgres-replication-connection.ts';

/** Builds protocol bytes the way the walsender writes them (big-endian). */
class Bytes {
  readonly parts: Buffer[] = [];
  byte(value: number): this {
    this.parts.push(Buffer.from([value]));
    return this;
  }
  char(value: string): this {
    return this.byte(value.charCodeAt(0));
  }
  int16(value: number): this {
    const buffer = Buffer.alloc(2);
    buffer.writeInt16BE(value);
    this.parts.push(buffer);
    return this;
  }
  int32(value: number): this {
    const buffer = Buffer.alloc(4);
    buffer.writeInt32BE(value);
    this.parts.push(buffer);
    return this;
  }
  int64(value: bigint): this {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64BE(value);
    this.parts.push(buffer);
    return this;
  }
  cstring(value: string): this {
    this.parts.push(Buffer.from(value, 'utf8'), Buffer.from([0]));
    return this;
  }
  /** TupleData: `t` text, null, or `u` (unchanged TOAST) for undefined. */
  tuple(values: readonly (string | null | undefined)[]): this {
    this.int16(values.length);
    for (const value of values) {
      if (value === null) this.char('n');
      else if (value === undefined) this.char('u');
      else {
        const text = Buffer.from(value, 'utf8');
        this.char('t').int32(text.length);
        this.parts.push(text);
      }
    }
    return this;
  }
  build(): Buffer {
    return Buffer.concat(this.parts);
  }
}

describe('decodePgoutput', () => {
  it('decodes Begin and Commit with their LSNs', () => {
    const begin = new Bytes().char('B').int64(0x1_0000_0010n).int64(0n).int32(42).build();
    const decoded = decodePgoutput(begin);
    expect(decoded).toMatchObject({ tag: 'begin', xid: 42 });
    expect(decoded.tag === 'begin' && decoded.finalLsn.toString()).toBe('1/10');

    const commit = new Bytes().char('C').byte(0).int64(0x10n).int64(0x38n).int64(0n).build();
    const end = decodePgoutput(commit);
    expect(end.tag === 'commit' && [String(end.commitLsn), String(end.endLsn)]).toEqual([
      '0/10',
      '0/38',
    ]);
  });

  it('decodes a Relation with its key flags', () => {
    const message = new Bytes()
      .char('R')
      .int32(16_384)
      .cstring('public')
      .cstring('orders')
      .char('d')
      .int16(2)
      .byte(1)
      .cstring('id')
      .int32(23)
      .int32(-1)
      .byte(0)
      .cstring('note ✓')
      .int32(1043)
      .int32(24)
      .build();
    expect(decodePgoutput(message)).toEqual({
      tag: 'relation',
      relationId: 16_384,
      schema: 'public',
      name: 'orders',
      columns: [
        { name: 'id', typeOid: 23, typeMod: -1, isKey: true },
        { name: 'note ✓', typeOid: 1043, typeMod: 24, isKey: false },
      ],
    });
  });

  it('decodes inserts, updates and deletes with text, NULL and unchanged TOAST values', () => {
    const insert = new Bytes().char('I').int32(7).char('N').tuple(['1', null, 'héllo']).build();
    expect(decodePgoutput(insert)).toEqual({
      tag: 'insert',
      relationId: 7,
      after: ['1', null, 'héllo'],
    });

    const plain = new Bytes().char('U').int32(7).char('N').tuple(['1', undefined]).build();
    expect(decodePgoutput(plain)).toEqual({
      tag: 'update',
      relationId: 7,
      beforeKind: null,
      before: null,
      after: ['1', undefined],
    });

    const keyed = new Bytes()
      .char('U')
      .int32(7)
      .char('K')
      .tuple(['1', null])
      .char('N')
      .tuple(['2', 'x'])
      .build();
    expect(decodePgoutput(keyed)).toMatchObject({ beforeKind: 'key', before: ['1', null] });

    const full = new Bytes().char('D').int32(7).char('O').tuple(['2', 'x']).build();
    expect(decodePgoutput(full)).toEqual({
      tag: 'delete',
      relationId: 7,
      beforeKind: 'old',
      before: ['2', 'x'],
    });
  });

  it('decodes Truncate and ignores Origin, Type and Message', () => {
    const truncate = new Bytes().char('T').int32(2).byte(1).int32(7).int32(8).build();
    expect(decodePgoutput(truncate)).toEqual({ tag: 'truncate', relationIds: [7, 8] });
    const type = new Bytes().char('Y').int32(90_000).cstring('public').cstring('mood').build();
    expect(decodePgoutput(type)).toEqual({ tag: 'ignored' });
  });

  it('refuses unknown and cut-short messages with a ReplicationError', () => {
    expect(() => decodePgoutput(Buffer.from('Z'))).toThrow(ReplicationError);
    const cut = new Bytes().char('I').int32(7).char('N').int16(1).char('t').int32(10).build();
    expect(() => decodePgoutput(cut)).toThrow(
      'The replication stream sent a message this connector cannot read (message cut short).',
    );
    const binary = new Bytes().char('I').int32(7).char('N').int16(1).char('b').build();
    expect(() => decodePgoutput(binary)).toThrow(ReplicationError);
  });
});

describe('walMessage and standbyStatusUpdate', () => {
  it('reads XLogData and keepalives', () => {
    const insert = new Bytes().char('I').int32(7).char('N').tuple(['1']).build();
    const data = new Bytes().char('w').int64(1n).int64(2n).int64(3n).build();
    expect(walMessage(Buffer.concat([data, insert]))).toEqual({
      kind: 'data',
      message: { tag: 'insert', relationId: 7, after: ['1'] },
    });
    const keepalive = new Bytes().char('k').int64(0x2_0000_0001n).int64(0n).byte(1).build();
    const decoded = walMessage(keepalive);
    expect(
      decoded?.kind === 'keepalive' && [String(decoded.walEnd), decoded.replyRequested],
    ).toEqual(['2/1', true]);
    expect(walMessage(Buffer.from('?'))).toBeNull();
  });

  it('confirms one position as written, flushed and applied', () => {
    const message = standbyStatusUpdate(Lsn.parse('1/2'), Date.UTC(2000, 0, 1, 0, 0, 1));
    expect(message).toHaveLength(34);
    expect(String.fromCharCode(message[0]!)).toBe('r');
    for (const offset of [1, 9, 17]) expect(message.readBigUInt64BE(offset)).toBe(0x1_0000_0002n);
    expect(message.readBigInt64BE(25)).toBe(1_000_000n); // µs since 2000-01-01
    expect(message[33]).toBe(0);
  });
});
