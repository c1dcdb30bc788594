import type { SourceSchema } from '../src/source-schema.ts';
import type { RowChange } from '../src/storage/apply-changes.ts';
import { column, table } from './fixtures.ts';

/**
 * Accounts keyed by (region, num), entries keyed by a BIGINT past 2^53 for some rows and
 * pointing at their account by a composite foreign key: every key type an index holds (numbers,
 * bigints, joined text), with NULLs, exact BIGINT/DECIMAL text, binary and non-ASCII text.
 */
export const ledgerSource: SourceSchema = {
  tables: [
    table(
      'accounts',
      [
        column('region', 'string', false),
        column('num', 'int', false),
        column('name', 'string'),
        column('balance', 'bigint'),
        column('avatar', 'binary'),
        column('active', 'boolean'),
      ],
      { primaryKey: ['region', 'num'] },
    ),
    table(
      'entries',
      [
        column('id', 'bigint', false),
        column('region', 'string'),
        column('num', 'int'),
        column('amount', 'decimal', true, 2),
        column('note', 'string'),
      ],
      {
        foreignKeys: [
          {
            name: 'fk_account',
            columns: ['region', 'num'],
            referencedTable: 'accounts',
            referencedColumns: ['region', 'num'],
          },
        ],
      },
    ),
  ],
};

const REGIONS = ['eu', 'us', 'ap', '日本'];
const BIG = 2n ** 62n;

export function accountRow(i: number): unknown[] {
  return [
    REGIONS[i % REGIONS.length],
    i,
    i % 7 === 0 ? null : `name ${i} 🙂`,
    i % 11 === 0 ? null : i % 5 === 0 ? String(BIG + BigInt(i)) : String(i * 1000),
    i % 3 === 0 ? null : Buffer.from([i & 255, 0, 255]),
    i % 2 === 0,
  ];
}

export function entryId(i: number): string {
  return i % 10 === 0 ? String(BIG + BigInt(i)) : String(i);
}

export function entryRow(i: number, accounts: number, shift = 0): unknown[] {
  const account = (i + shift) % accounts;
  const orphan = i % 13 === 0;
  return [
    entryId(i),
    orphan ? null : REGIONS[account % REGIONS.length],
    orphan ? null : account,
    i % 17 === 0 ? null : `${i}.25`,
    i % 19 === 0 ? null : `note ${i % 50}`,
  ];
}

export function ledgerRows(accounts: number, entries: number): Record<string, unknown[][]> {
  return {
    accounts: Array.from({ length: accounts }, (_, i) => accountRow(i)),
    entries: Array.from({ length: entries }, (_, i) => entryRow(i, accounts)),
  };
}

/**
 * One batch of changes: `count` entries from `from` move to another account (their foreign
 * key changes), one is deleted, one inserted, and an account is renamed.
 */
export function ledgerChanges(
  step: number,
  from: number,
  count: number,
  accounts: number,
  entries: number,
): Map<string, RowChange[]> {
  const moved: RowChange[] = [];
  for (let i = from; i < from + count; i++) {
    moved.push({ op: 'update', before: null, after: entryRow(i, accounts, step) });
  }
  moved.push({ op: 'delete', row: entryRow(from + count, accounts) });
  moved.push({ op: 'insert', row: entryRow(entries + step, accounts) });
  const renamed = accountRow(step % accounts);
  renamed[2] = `renamed ${step}`;
  return new Map([
    ['entries', moved],
    ['accounts', [{ op: 'update', before: null, after: renamed }]],
  ]);
}
