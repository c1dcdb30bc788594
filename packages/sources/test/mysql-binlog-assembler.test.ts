import type { SourceColumn } from '@replix/engine';
import type { ColumnSchema, QueryEvent } from '@vlasky/zongji';
import { describe, expect, it } from 'vitest';
import { ReplicationError } from '../src/errors.ts';
import { BinlogAssembler } from '../src/mysql/mysql-binlog-assembler.ts';
import { BinlogPosition } from '../src/mysql/mysql-position.ts';

const FROM = new BinlogPosition('binlog.000001', 100);
const COLUMNS: SourceColumn[] = [
  { name: 'id', type: 'int', nullable: false, sourceType: 'int(11)' },
  { name: 'doc', type: 'json', nullable: true, sourceType: 'json' },
];
const schema = (name: string, type: string): ColumnSchema => ({
  COLUMN_NAME: name,
  COLUMN_TYPE: type,
  COLLATION_NAME: null,
  CHARACTER_SET_NAME: null,
  COLUMN_COMMENT: '',
});
const LAYOUT = [schema('id', 'int(11)'), schema('doc', 'longtext'), schema('extra', 'int(11)')];

function assembler(layouts = new Map([['Orders', LAYOUT]])): BinlogAssembler {
  return new BinlogAssembler('shop', [{ table: 'Orders', columns: COLUMNS }], layouts, FROM);
}

function query(sql: string, nextPosition: number, schemaName = 'shop'): QueryEvent {
  return { query: sql, schema: schemaName, nextPosition } as unknown as QueryEvent;
}

describe('BinlogAssembler', () => {
  it('has nothing to give before a commit', () => {
    const binlog = assembler();
    expect(binlog.take(10)).toBeNull();
    binlog.query(query('BEGIN', 0));
    expect(binlog.take(10)).toBeNull();
  });

  it('turns TRUNCATE into a truncate and DDL into one schema change, names in any case', () => {
    const binlog = assembler();
    binlog.query(query('TRUNCATE TABLE `SHOP`.`orders`', 200));
    binlog.query(query('ALTER TABLE Orders ADD COLUMN y INT', 300));
    binlog.query(query('DROP TABLE Orders', 400));
    binlog.query(query('TRUNCATE Orders', 500));
    binlog.query(query('DROP TABLE Orders', 600, 'elsewhere'));
    expect(binlog.take(10)).toEqual({
      changes: [
        { op: 'truncate', table: 'Orders' },
        {
          op: 'schemaChange',
          table: 'Orders',
          detail: 'The table was altered (ALTER TABLE).',
        },
      ],
      position: new BinlogPosition('binlog.000001', 600),
    });
    expect(binlog.committedChanges).toBe(0);
  });

  it('merges committed transactions into a batch, never past the limit unless one is bigger', () => {
    const binlog = assembler();
    binlog.query(query('TRUNCATE Orders', 200));
    binlog.query(query('TRUNCATE Orders', 300));
    binlog.query(query('TRUNCATE Orders', 400));
    expect(binlog.take(2)?.position.offset).toBe(300);
    expect(binlog.take(2)).toMatchObject({ changes: [{ op: 'truncate' }] });
    expect(binlog.take(2)).toBeNull();
  });

  it('moves the position over statements and transactions without followed changes', () => {
    const binlog = assembler();
    binlog.query(query('GRANT SELECT ON *.* TO u', 200));
    binlog.commit(300);
    binlog.rotate('binlog.000002');
    binlog.commit(400);
    expect(binlog.take(10)).toEqual({
      changes: [],
      position: new BinlogPosition('binlog.000002', 400),
    });
  });

  it('keeps a transaction open through events without a position', () => {
    const binlog = assembler();
    binlog.query(query('SAVEPOINT a', 150));
    binlog.query(query('ROLLBACK TO a', 160));
    binlog.commit(0);
    expect(binlog.take(10)).toBeNull();
    binlog.query(query('COMMIT', 170));
    expect(binlog.take(10)?.position.offset).toBe(170);
  });

  it('reports at the start a table that no longer has the requested columns', () => {
    const binlog = assembler(new Map([['Orders', [schema('id', 'bigint(20)')]]]));
    expect(binlog.take(10)).toEqual({
      changes: [
        {
          op: 'schemaChange',
          table: 'Orders',
          detail: 'Column "id" is bigint(20) now, not int(11).',
        },
      ],
      position: FROM,
    });
    expect(assembler(new Map()).take(10)?.changes).toEqual([
      { op: 'schemaChange', table: 'Orders', detail: 'The table does not exist any more.' },
    ]);
  });

  it('refuses statement-based changes to its database', () => {
    const binlog = assembler();
    expect(() => binlog.query(query("INSERT INTO Orders VALUES (1, '{}')", 200))).toThrow(
      ReplicationError,
    );
    binlog.query(query('INSERT INTO t VALUES (1)', 300, 'other'));
  });
});
