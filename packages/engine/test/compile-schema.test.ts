import { describe, expect, it } from 'vitest';
import { SchemaConfigError } from '../src/errors.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import type { CompiledSchema, CompiledTable } from '../src/schema/compiled-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { column, table } from './fixtures.ts';

/**
 * customers (self-referencing through referrer_id); orders with two keys to customers and a
 * plain `customer` column; lines with a composite primary key; shipments with a composite
 * foreign key to lines; audit with no primary key and a key column not ending in `_id`.
 */
const source: SourceSchema = {
  tables: [
    table('audit', [column('at', 'timestamp'), column('actor', 'int')], {
      primaryKey: [],
      foreignKeys: [
        {
          name: 'fk_actor',
          columns: ['actor'],
          referencedTable: 'customers',
          referencedColumns: ['id'],
        },
      ],
    }),
    table(
      'customers',
      [
        column('id', 'int', false),
        column('name', 'string'),
        column('referrer_id', 'int'),
        column('secret', 'string'),
        column('tenant_id', 'int'),
      ],
      {
        foreignKeys: [
          {
            name: 'fk_ref',
            columns: ['referrer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table(
      'lines',
      [column('order_id', 'int', false), column('no', 'int', false), column('qty', 'int')],
      {
        primaryKey: ['order_id', 'no'],
        foreignKeys: [
          {
            name: 'fk_order',
            columns: ['order_id'],
            referencedTable: 'orders',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table(
      'orders',
      [
        column('id', 'int', false),
        column('customer_id', 'int'),
        column('payer_id', 'int'),
        column('customer', 'string'),
        column('tenant_id', 'int'),
      ],
      {
        foreignKeys: [
          {
            name: 'fk_customer',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
          {
            name: 'fk_payer',
            columns: ['payer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table(
      'shipments',
      [column('id', 'int', false), column('order_id', 'int'), column('line_no', 'int')],
      {
        foreignKeys: [
          {
            name: 'fk_line',
            columns: ['order_id', 'line_no'],
            referencedTable: 'lines',
            referencedColumns: ['order_id', 'no'],
          },
        ],
      },
    ),
  ],
};

function compile(config: unknown = {}, schema: SourceSchema = source): CompiledSchema {
  return compileSchema(schema, parseSchemaConfig(config));
}

function issues(
  config: unknown,
  schema: SourceSchema = source,
): { path: string; message: string }[] {
  try {
    compile(config, schema);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaConfigError);
    return [...(error as SchemaConfigError).issues];
  }
  throw new Error('expected the config to be rejected');
}

function tableOf(schema: CompiledSchema, name: string): CompiledTable {
  const found = schema.tablesByName.get(name);
  if (!found) throw new Error(`no table ${name}`);
  return found;
}

/** `name kind target local=target` with column names, sorted, for readable expectations. */
function relations(schema: CompiledSchema, name: string): string[] {
  const owner = tableOf(schema, name);
  return owner.relations
    .toSorted((a, b) => a.name.localeCompare(b.name))
    .map((relation) => {
      const target = tableOf(schema, relation.target);
      const local = relation.localColumns.map((c) => owner.columns[c]?.name).join(',');
      const remote = relation.targetColumns.map((c) => target.columns[c]?.name).join(',');
      return `${relation.name} ${relation.kind} ${relation.target} ${local}=${remote}`;
    });
}

describe('compileSchema: relation names', () => {
  const schema = compile();

  it('names forward relations after the key column minus _id, reverse ones after the table', () => {
    expect(relations(schema, 'lines')).toEqual([
      'order forward orders order_id=id',
      'shipments reverse shipments order_id,no=order_id,line_no',
    ]);
  });

  it('names a self-reference both ways', () => {
    expect(relations(schema, 'customers')).toEqual([
      'audit reverse audit id=actor',
      'customers reverse customers id=referrer_id',
      'orders_by_customer_id reverse orders id=customer_id',
      'orders_by_payer_id reverse orders id=payer_id',
      'referrer forward customers referrer_id=id',
    ]);
  });

  it('falls back to <other table>_by_<fk column> on a collision with a column or a relation', () => {
    // `customer` is a column of orders; two reverse relations of customers are both `orders`.
    expect(relations(schema, 'orders')).toEqual([
      'customers_by_customer_id forward customers customer_id=id',
      'lines reverse lines id=order_id',
      'payer forward customers payer_id=id',
    ]);
  });

  it('names a composite or non-_id key after the referenced table', () => {
    expect(relations(schema, 'shipments')).toEqual([
      'lines forward lines order_id,line_no=order_id,no',
    ]);
    expect(relations(schema, 'audit')).toEqual(['customers forward customers actor=id']);
  });

  it('names a colliding composite key with every column', () => {
    const colliding: SourceSchema = {
      tables: [
        ...source.tables.filter((t) => t.name !== 'shipments'),
        table(
          'shipments',
          [
            column('id', 'int', false),
            column('order_id', 'int'),
            column('line_no', 'int'),
            column('lines', 'int'),
          ],
          {
            foreignKeys: [
              {
                name: 'fk_line',
                columns: ['order_id', 'line_no'],
                referencedTable: 'lines',
                referencedColumns: ['order_id', 'no'],
              },
            ],
          },
        ),
      ],
    };
    expect(relations(compile({}, colliding), 'shipments')).toEqual([
      'lines_by_order_id_line_no forward lines order_id,line_no=order_id,no',
    ]);
  });

  it('keeps the constraint name', () => {
    const names = tableOf(schema, 'orders').relations.map((r) => `${r.name}:${r.constraintName}`);
    expect(names.sort()).toEqual([
      'customers_by_customer_id:fk_customer',
      'lines:fk_order',
      'payer:fk_payer',
    ]);
  });

  it('drops relations to unselected tables or through unselected key columns', () => {
    const some = compile({
      tables: [{ name: 'orders', columns: { exclude: ['customer_id'] } }, { name: 'customers' }],
    });
    expect(relations(some, 'orders')).toEqual(['payer forward customers payer_id=id']);
    // Without the colliding twin, the reverse relation takes the plain name.
    expect(relations(some, 'customers')).toEqual([
      'customers reverse customers id=referrer_id',
      'orders reverse orders id=payer_id',
      'referrer forward customers referrer_id=id',
    ]);
  });
});

describe('compileSchema: tables and columns', () => {
  it('compiles every table, sorted by API name, columns in source order', () => {
    const schema = compile();
    expect(schema.tables.map((t) => t.name)).toEqual([
      'audit',
      'customers',
      'lines',
      'orders',
      'shipments',
    ]);
    const orders = tableOf(schema, 'orders');
    expect(orders.columns.map((c) => [c.name, c.sourceName, c.type, c.index])).toEqual([
      ['id', 'id', 'int', 0],
      ['customer_id', 'customer_id', 'int', 1],
      ['payer_id', 'payer_id', 'int', 2],
      ['customer', 'customer', 'string', 3],
      ['tenant_id', 'tenant_id', 'int', 4],
    ]);
    expect(orders.primaryKey).toEqual([0]);
    expect(tableOf(schema, 'lines').primaryKey).toEqual([0, 1]);
    expect(tableOf(schema, 'audit').primaryKey).toEqual([]);
  });

  it('selects only the listed tables', () => {
    expect(
      compile({ tables: [{ name: 'orders' }, { name: 'lines' }] }).tables.map((t) => t.name),
    ).toEqual(['lines', 'orders']);
  });

  it('include keeps the listed columns, in source order', () => {
    const schema = compile({
      tables: [{ name: 'customers', columns: { include: ['secret', 'id', 'name'] } }],
    });
    expect(tableOf(schema, 'customers').columns.map((c) => c.name)).toEqual([
      'id',
      'name',
      'secret',
    ]);
  });

  it('exclude drops the listed columns', () => {
    const schema = compile({
      tables: [{ name: 'customers', columns: { exclude: ['secret', 'tenant_id'] } }],
    });
    expect(tableOf(schema, 'customers').columns.map((c) => c.name)).toEqual([
      'id',
      'name',
      'referrer_id',
    ]);
  });

  it('always keeps the primary key, in its source position', () => {
    const included = compile({ tables: [{ name: 'lines', columns: { include: ['qty'] } }] });
    expect(tableOf(included, 'lines').columns.map((c) => c.name)).toEqual([
      'order_id',
      'no',
      'qty',
    ]);
    expect(tableOf(included, 'lines').primaryKey).toEqual([0, 1]);
    const excluded = compile({
      tables: [{ name: 'orders', columns: { exclude: ['id', 'customer'] } }],
    });
    expect(tableOf(excluded, 'orders').columns.map((c) => c.name)).toEqual([
      'id',
      'customer_id',
      'payer_id',
      'tenant_id',
    ]);
  });

  it('rejects unknown tables and columns with their key paths', () => {
    expect(
      issues({
        tables: [
          { name: 'orders', columns: { include: ['id', 'nope'] } },
          { name: 'ghosts' },
          { name: 'customers', columns: { exclude: ['secret', 'missing'] } },
        ],
      }),
    ).toEqual([
      {
        path: 'tables[1].name',
        message: 'the source has no table or view "ghosts" (it has 5 tables and 0 views)',
      },
      { path: 'tables[0].columns.include[1]', message: 'table "orders" has no column "nope"' },
      {
        path: 'tables[2].columns.exclude[1]',
        message: 'table "customers" has no column "missing"',
      },
    ]);
  });
});

describe('compileSchema: field_aliases', () => {
  it('renames tables, and relations follow the new name', () => {
    const schema = compile({ field_aliases: { customers: 'clients' } });
    expect(schema.tables.map((t) => t.name)).toEqual([
      'audit',
      'clients',
      'lines',
      'orders',
      'shipments',
    ]);
    expect(tableOf(schema, 'clients').sourceName).toBe('customers');
    expect(relations(schema, 'orders')).toContain(
      'customers_by_customer_id forward clients customer_id=id',
    );
    expect(schema.tablesByName.has('customers')).toBe(false);
  });

  it('renames columns (keyed by source table and column)', () => {
    const schema = compile({ field_aliases: { 'orders.customer_id': 'client_id' } });
    const orders = tableOf(schema, 'orders');
    expect(orders.columnsByName.get('client_id')?.sourceName).toBe('customer_id');
    expect(orders.columnsByName.has('customer_id')).toBe(false);
    // Relation names still come from the source column.
    expect(orders.relationsByName.has('customers_by_customer_id')).toBe(true);
  });

  it('renames relations by their generated name, including _by_ names', () => {
    const schema = compile({
      field_aliases: {
        'customers.orders_by_customer_id': 'purchases',
        'orders.payer': 'paid_by',
        'customers.customers': 'referred',
      },
    });
    expect(tableOf(schema, 'customers').relationsByName.get('purchases')?.target).toBe('orders');
    expect(tableOf(schema, 'customers').relationsByName.get('referred')?.kind).toBe('reverse');
    expect(tableOf(schema, 'orders').relationsByName.get('paid_by')?.kind).toBe('forward');
  });

  it('rejects aliases that name nothing, or make two fields or tables share a name', () => {
    expect(issues({ field_aliases: { nope: 'x', 'orders.nope': 'y' } })).toEqual([
      {
        path: 'field_aliases.nope',
        message: 'no selected table, column or relation is named "nope"',
      },
      {
        path: 'field_aliases.orders.nope',
        message: 'no selected table, column or relation is named "orders.nope"',
      },
    ]);
    expect(issues({ field_aliases: { 'orders.customer': 'payer' } })).toEqual([
      { path: 'field_aliases', message: 'table "orders" would have two fields named "payer"' },
    ]);
    expect(issues({ field_aliases: { lines: 'orders' } })).toEqual([
      { path: 'field_aliases', message: 'two tables would be named "orders"' },
    ]);
    // An alias for a table that is not selected names nothing.
    expect(
      issues({ tables: [{ name: 'orders' }], field_aliases: { lines: 'items' } })[0]?.path,
    ).toBe('field_aliases.lines');
  });
});

describe('compileSchema: where and where_columns', () => {
  it('keeps a table entry where with its columns', () => {
    const schema = compile({
      tables: [
        { name: 'orders', where: 'tenant_id = 7', where_columns: ['tenant_id'] },
        { name: 'lines' },
      ],
    });
    expect(tableOf(schema, 'orders').where).toBe('tenant_id = 7');
    expect(tableOf(schema, 'orders').whereColumns).toEqual(['tenant_id']);
    expect(tableOf(schema, 'lines').where).toBeUndefined();
  });

  it('applies a root where to the tables that have all its columns; a table where wins', () => {
    const schema = compile({
      tables: [
        { name: 'orders' },
        { name: 'customers', where: 'secret IS NULL', where_columns: ['secret'] },
        { name: 'lines' },
      ],
      where: 'tenant_id = 7',
      where_columns: ['tenant_id'],
    });
    expect(tableOf(schema, 'orders').where).toBe('tenant_id = 7');
    expect(tableOf(schema, 'orders').whereColumns).toEqual(['tenant_id']);
    expect(tableOf(schema, 'customers').where).toBe('secret IS NULL');
    expect(tableOf(schema, 'lines').where).toBeUndefined();
  });

  it('does not apply a root where to a table whose where column is not selected', () => {
    const schema = compile({
      tables: [{ name: 'orders', columns: { exclude: ['tenant_id'] } }],
      where: 'tenant_id = 7',
      where_columns: ['tenant_id'],
    });
    expect(tableOf(schema, 'orders').where).toBeUndefined();
  });

  it('rejects where_columns a table entry does not select', () => {
    expect(
      issues({
        tables: [
          { name: 'lines' },
          {
            name: 'orders',
            where: 'x',
            where_columns: ['tenant_id', 'nope'],
            columns: { exclude: ['tenant_id'] },
          },
        ],
      }),
    ).toEqual([
      {
        path: 'tables[1].where_columns[0]',
        message: 'table "orders" has no selected column "tenant_id"',
      },
      {
        path: 'tables[1].where_columns[1]',
        message: 'table "orders" has no selected column "nope"',
      },
    ]);
  });
});
