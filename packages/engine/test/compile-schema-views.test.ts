import { describe, expect, it } from 'vitest';
import { SchemaConfigError } from '../src/errors.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { VIEW_REFRESH_DEFAULT_S } from '../src/schema/schema-config-schema.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { column, table } from './fixtures.ts';

/** Sakila-shaped: two tables, a view joining them and a materialized view. */
const source: SourceSchema = {
  tables: [
    table('actor', [column('id', 'int', false), column('first_name', 'string')]),
    table('film_actor', [column('actor_id', 'int', false), column('film_id', 'int', false)], {
      primaryKey: ['actor_id', 'film_id'],
      foreignKeys: [
        {
          name: 'fk_actor',
          columns: ['actor_id'],
          referencedTable: 'actor',
          referencedColumns: ['id'],
        },
      ],
    }),
  ],
  views: [
    table('actor_info', [column('actor_id', 'int'), column('film_info', 'string')], {
      kind: 'view',
      primaryKey: [],
    }),
    table('sales_by_store', [column('store', 'string'), column('total_sales', 'decimal')], {
      kind: 'materialized_view',
      primaryKey: [],
    }),
  ],
};

function issuesOf(config: unknown): { path: string; message: string }[] {
  try {
    compileSchema(source, parseSchemaConfig(config));
  } catch (error) {
    if (error instanceof SchemaConfigError) return [...error.issues];
    throw error;
  }
  throw new Error('the config compiled');
}

describe('compileSchema with views', () => {
  it('serves every base table and no view by default', () => {
    const schema = compileSchema(source, parseSchemaConfig({}));
    expect(schema.tables.map((t) => [t.name, t.kind, t.refreshIntervalS])).toEqual([
      ['actor', 'table', null],
      ['film_actor', 'table', null],
    ]);
  });

  it('serves a named view and materialized view, re-read at their own interval', () => {
    const schema = compileSchema(
      source,
      parseSchemaConfig({
        tables: [
          { name: 'actor' },
          { name: 'actor_info', refresh_interval: 5 },
          { name: 'sales_by_store', columns: { exclude: ['store'] } },
        ],
      }),
    );
    const info = schema.tablesByName.get('actor_info');
    expect(info?.kind).toBe('view');
    expect(info?.refreshIntervalS).toBe(5);
    expect(info?.primaryKey).toEqual([]);
    expect(info?.columns.map((c) => c.name)).toEqual(['actor_id', 'film_info']);
    const sales = schema.tablesByName.get('sales_by_store');
    expect(sales?.kind).toBe('materialized_view');
    expect(sales?.refreshIntervalS).toBe(VIEW_REFRESH_DEFAULT_S);
    expect(sales?.columns.map((c) => c.name)).toEqual(['total_sales']);
  });

  it('infers no relation to or from a view, even on a column ending in _id', () => {
    const schema = compileSchema(
      source,
      parseSchemaConfig({ tables: [{ name: 'actor' }, { name: 'actor_info' }] }),
    );
    expect(schema.tablesByName.get('actor_info')?.relations).toEqual([]);
    expect(schema.tablesByName.get('actor')?.relations).toEqual([]);
  });

  it('refuses refresh_interval on a base table, naming the key', () => {
    expect(issuesOf({ tables: [{ name: 'actor', refresh_interval: 10 }] })).toEqual([
      {
        path: 'tables[0].refresh_interval',
        message:
          '"actor" is a table, which follows the change stream: only a view is re-read at an interval',
      },
    ]);
  });

  it('names the closest view and its kind for an unknown name', () => {
    expect(issuesOf({ tables: [{ name: 'actor_inf' }] })).toEqual([
      {
        path: 'tables[0].name',
        message: 'the source has no table or view "actor_inf"; did you mean the view "actor_info"?',
      },
    ]);
  });

  it('names the closest table, and a materialized view as such', () => {
    expect(issuesOf({ tables: [{ name: 'film_actors' }, { name: 'sales_by_stor' }] })).toEqual([
      {
        path: 'tables[0].name',
        message:
          'the source has no table or view "film_actors"; did you mean the table "film_actor"?',
      },
      {
        path: 'tables[1].name',
        message:
          'the source has no table or view "sales_by_stor"; did you mean the materialized view "sales_by_store"?',
      },
    ]);
  });

  it('refuses a materialized view never populated, saying what to run', () => {
    const unpopulated: SourceSchema = {
      tables: source.tables,
      views: [
        table('rental_by_category', [column('category', 'string')], {
          kind: 'materialized_view',
          populated: false,
          primaryKey: [],
        }),
      ],
    };
    expect(() =>
      compileSchema(unpopulated, parseSchemaConfig({ tables: [{ name: 'rental_by_category' }] })),
    ).toThrow(
      'tables[0].name: the materialized view "rental_by_category" has never been populated: run REFRESH MATERIALIZED VIEW on the source first',
    );
  });

  it('counts what exists when no name is close', () => {
    expect(issuesOf({ tables: [{ name: 'inventory' }] })).toEqual([
      {
        path: 'tables[0].name',
        message: 'the source has no table or view "inventory" (it has 2 tables and 2 views)',
      },
    ]);
  });
});

describe('refresh_interval in the schema config', () => {
  it('takes seconds, fractions included, from 1 up', () => {
    const config = parseSchemaConfig({ tables: [{ name: 'v', refresh_interval: 1.5 }] });
    expect(config.tables?.[0]?.refresh_interval).toBe(1.5);
  });

  it('refuses less than one second and a non-number, with the key path', () => {
    for (const value of [0.5, 0, -1, '60']) {
      try {
        parseSchemaConfig({ tables: [{ name: 'v', refresh_interval: value }] });
        throw new Error(`accepted ${String(value)}`);
      } catch (error) {
        expect(error).toBeInstanceOf(SchemaConfigError);
        expect((error as SchemaConfigError).issues[0]?.path).toBe('tables[0].refresh_interval');
      }
    }
  });

  it('says why below the minimum', () => {
    try {
      parseSchemaConfig({ tables: [{ name: 'v', refresh_interval: 0.2 }] });
    } catch (error) {
      expect((error as SchemaConfigError).issues).toEqual([
        { path: 'tables[0].refresh_interval', message: 'a view is re-read at most once a second' },
      ]);
    }
  });
});
