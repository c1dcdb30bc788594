import type { SourceColumn } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { mySqlSelectSql, quoteMySqlIdentifier } from '../src/mysql/mysql-sql.ts';
import { postgresSelectSql, quotePostgresIdentifier } from '../src/postgres/postgres-sql.ts';

const column = (name: string, sourceType = 'int'): SourceColumn => ({
  name,
  type: 'int',
  nullable: false,
  sourceType,
});

describe('identifier quoting', () => {
  it('wraps MySQL names in backticks and doubles embedded backticks', () => {
    expect(quoteMySqlIdentifier('orders')).toBe('`orders`');
    expect(quoteMySqlIdentifier('we`ird')).toBe('`we``ird`');
    expect(quoteMySqlIdentifier('a"b c')).toBe('`a"b c`');
  });

  it('wraps PostgreSQL names in double quotes and doubles embedded quotes', () => {
    expect(quotePostgresIdentifier('Orders')).toBe('"Orders"');
    expect(quotePostgresIdentifier('we"ird')).toBe('"we""ird"');
    expect(quotePostgresIdentifier('a`b c')).toBe('"a`b c"');
  });
});

describe('snapshot SELECT text', () => {
  it('selects the requested columns in order and parenthesises the where', () => {
    expect(mySqlSelectSql('t', [column('b'), column('a')], undefined)).toBe(
      'SELECT `b`, `a` FROM `t`',
    );
    expect(mySqlSelectSql('t', [column('id')], 'a = 1 OR b = 2')).toBe(
      'SELECT `id` FROM `t` WHERE (a = 1 OR b = 2\n)',
    );
    expect(postgresSelectSql('app', 'T', [column('b'), column('a')], '  ')).toBe(
      'SELECT "b", "a" FROM "app"."T"',
    );
    expect(postgresSelectSql('public', 't', [column('id')], 'x > 0 -- live rows')).toBe(
      'SELECT "id" FROM "public"."t" WHERE (x > 0 -- live rows\n)',
    );
  });

  it('reads MySQL spatial columns as WKT text', () => {
    expect(mySqlSelectSql('t', [column('g', 'point')], undefined)).toBe(
      'SELECT ST_AsText(`g`) FROM `t`',
    );
  });
});
