import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type OpenStore, openStore } from '../src/adapters/store/open-store.ts';

// The table types Kysely checks every query against (store/schema.ts) say what the migrations
// made: the same tables, the same columns, and null where a column may hold it.

let store: OpenStore;

beforeAll(async () => {
  store = await openStore({ inMemory: true });
});

afterAll(async () => {
  await store?.close();
});

type Columns = Record<string, 'null' | 'not null'>;

/** Each table of `interface Store` in schema.ts, with its columns as the types declare them. */
function declaredTables(): Record<string, Columns> {
  const path = new URL('../src/adapters/store/schema.ts', import.meta.url);
  const source = ts.createSourceFile(
    'schema.ts',
    readFileSync(path, 'utf8'),
    ts.ScriptTarget.Latest,
  );
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const columnsOf = (declaration: ts.InterfaceDeclaration): Columns =>
    Object.fromEntries(
      declaration.members.filter(ts.isPropertySignature).map((member) => {
        const type = member.type?.getText(source) ?? '';
        // `Nullable…` aliases and `| null` declare a column that may hold null.
        const nullable = /\bnull\b|^Nullable/.test(type);
        return [(member.name as ts.Identifier).text, nullable ? 'null' : 'not null'];
      }),
    );
  const store = interfaces.get('Store') as ts.InterfaceDeclaration;
  return Object.fromEntries(
    store.members.filter(ts.isPropertySignature).map((member) => {
      const tableType = member.type?.getText(source) as string;
      const table = interfaces.get(tableType);
      if (!table) throw new Error(`no interface ${tableType}`);
      return [(member.name as ts.Identifier).text, columnsOf(table)];
    }),
  );
}

/** Each table the migrations made, with its columns as the database has them. */
async function migratedTables(): Promise<Record<string, Columns>> {
  const { rows } = await sql<{ table_name: string; column_name: string; is_nullable: string }>`
    SELECT table_name, column_name, is_nullable FROM information_schema.columns
    WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'
    ORDER BY table_name, ordinal_position`.execute(store.db);
  const tables: Record<string, Columns> = {};
  for (const row of rows) {
    tables[row.table_name] ??= {};
    (tables[row.table_name] as Columns)[row.column_name] =
      row.is_nullable === 'YES' ? 'null' : 'not null';
  }
  return tables;
}

it('declares every table and column the migrations made, null where they allow it', async () => {
  const declared = declaredTables();
  const migrated = await migratedTables();
  expect(Object.keys(declared).length).toBeGreaterThan(20);
  expect(Object.keys(declared).sort()).toEqual(Object.keys(migrated).sort());
  for (const [table, columns] of Object.entries(migrated)) {
    expect({ table, columns: declared[table] }).toEqual({ table, columns });
  }
});
