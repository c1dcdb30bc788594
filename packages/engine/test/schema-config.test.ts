import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { SchemaConfigError } from '../src/errors.ts';
import { defaultSchemaConfig, parseSchemaConfig } from '../src/schema/schema-config.ts';
import { schemaConfigJsonSchema } from '../src/schema/schema-config-schema.ts';

/** The issues `parseSchemaConfig(input)` throws with. */
function issues(input: unknown): { path: string; message: string }[] {
  try {
    parseSchemaConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaConfigError);
    return [...(error as SchemaConfigError).issues];
  }
  throw new Error('expected the config to be rejected');
}

const DEFAULTS = {
  query: {
    nested_default_limit: 1000,
    max_body_bytes: 65_536,
    timeout_ms: 2000,
    max_rows: 100_000,
    max_response_bytes: 16 * 1024 * 1024,
  },
  memory_cap_mb: null,
  sync: { mode: 'cdc', interval: 1, safety_net: 0 },
  cdc_reconnect_policy: 'resume',
};

describe('parseSchemaConfig: defaults', () => {
  it('fills every default for an empty, null or missing config', () => {
    expect(parseSchemaConfig({})).toEqual(DEFAULTS);
    expect(parseSchemaConfig(null)).toEqual(DEFAULTS);
    expect(parseSchemaConfig(undefined)).toEqual(DEFAULTS);
    expect(defaultSchemaConfig()).toEqual(DEFAULTS);
  });

  it('fills the defaults inside a partly given section', () => {
    expect(parseSchemaConfig({ query: {} }).query).toEqual(DEFAULTS.query);
    expect(parseSchemaConfig({ query: { nested_default_limit: 0 } }).query).toEqual({
      ...DEFAULTS.query,
      nested_default_limit: 0,
    });
    expect(parseSchemaConfig({ sync: { mode: 'poll' } }).sync).toEqual({
      mode: 'poll',
      interval: 1,
      safety_net: 0,
    });
  });

  it('leaves optional keys absent', () => {
    const config = parseSchemaConfig({});
    expect(config.tables).toBeUndefined();
    expect(config.where).toBeUndefined();
    expect(config.where_columns).toBeUndefined();
    expect(config.field_aliases).toBeUndefined();
    expect(config.sync.change_column).toBeUndefined();
  });
});

describe('parseSchemaConfig: every key', () => {
  it('accepts a config that sets every key', () => {
    const input = {
      tables: [
        { name: 'orders', where: 'total > 0', where_columns: ['total'] },
        { name: 'customers', columns: { include: ['id', 'name'] } },
        { name: 'notes', columns: { exclude: ['secret'] } },
      ],
      where: 'tenant_id = 7',
      where_columns: ['tenant_id'],
      field_aliases: { customers: 'clients', 'orders.total': 'amount', 'orders.customer': 'buyer' },
      query: {
        nested_default_limit: 25,
        max_body_bytes: 256,
        timeout_ms: 500,
        max_rows: 10,
        max_response_bytes: 4096,
      },
      memory_cap_mb: 512.5,
      sync: { mode: 'poll', interval: 0.5, safety_net: 60, change_column: 'updated_at' },
      cdc_reconnect_policy: 'shutdown',
    };
    expect(parseSchemaConfig(input)).toEqual(input);
  });

  it('accepts boundary values', () => {
    expect(parseSchemaConfig({ sync: { safety_net: 0 } }).sync.safety_net).toBe(0);
    expect(parseSchemaConfig({ memory_cap_mb: null }).memory_cap_mb).toBeNull();
    expect(parseSchemaConfig({ query: { max_body_bytes: 256 } }).query.max_body_bytes).toBe(256);
  });
});

describe('parseSchemaConfig: errors name their key path', () => {
  it('rejects a config that is not an object', () => {
    expect(issues('tables: []')).toEqual([
      { path: '', message: 'Invalid input: expected object, received string' },
    ]);
    expect(new SchemaConfigError(issues(42)).message).toContain('(root)');
  });

  it('names an unknown key by its own path, at any depth', () => {
    expect(issues({ bogus: 1 })).toEqual([{ path: 'bogus', message: 'unknown key' }]);
    expect(issues({ query: { extra: 1, other: 2 } })).toEqual([
      { path: 'query.extra', message: 'unknown key' },
      { path: 'query.other', message: 'unknown key' },
    ]);
    expect(issues({ tables: [{ name: 'a' }, { name: 'b', colums: {} }] })).toEqual([
      { path: 'tables[1].colums', message: 'unknown key' },
    ]);
    expect(issues({ tables: [{ name: 'a', columns: { only: ['x'] } }] })).toEqual([
      { path: 'tables[0].columns.only', message: 'unknown key' },
    ]);
    expect(issues({ sync: { every: 5 } })).toEqual([
      { path: 'sync.every', message: 'unknown key' },
    ]);
  });

  it('tables', () => {
    expect(issues({ tables: [] })).toEqual([
      { path: 'tables', message: 'Too small: expected array to have >=1 items' },
    ]);
    expect(issues({ tables: [{ name: 'a' }, { name: 'b' }, { name: '' }] })).toEqual([
      { path: 'tables[2].name', message: 'Too small: expected string to have >=1 characters' },
    ]);
    expect(issues({ tables: [{ name: 'a' }, { name: 'b' }, { name: 'a' }] })).toEqual([
      { path: 'tables[2].name', message: 'table "a" is listed twice' },
    ]);
    expect(issues({ tables: [{ where: 'x' }] })[0]?.path).toBe('tables[0].name');
    expect(issues({ tables: [{ name: 'a', where: '' }] })[0]?.path).toBe('tables[0].where');
    expect(issues({ tables: [{ name: 'a', where_columns: [] }] })).toEqual([
      { path: 'tables[0].where_columns', message: 'Too small: expected array to have >=1 items' },
    ]);
    expect(issues({ tables: [{ name: 'a', where_columns: ['x', ''] }] })[0]?.path).toBe(
      'tables[0].where_columns[1]',
    );
  });

  it('tables[].columns', () => {
    expect(
      issues({ tables: [{ name: 'a', columns: { include: ['x'], exclude: ['y'] } }] }),
    ).toEqual([{ path: 'tables[0].columns', message: 'give either include or exclude, not both' }]);
    expect(issues({ tables: [{ name: 'a', columns: { include: [] } }] })).toEqual([
      { path: 'tables[0].columns.include', message: 'Too small: expected array to have >=1 items' },
    ]);
    expect(issues({ tables: [{ name: 'a', columns: { exclude: ['ok', ''] } }] })[0]?.path).toBe(
      'tables[0].columns.exclude[1]',
    );
  });

  it('where and where_columns', () => {
    expect(issues({ where: 'tenant = 1' })).toEqual([
      {
        path: 'where_columns',
        message: 'a root "where" needs "where_columns": it applies to the tables that have them',
      },
    ]);
    expect(issues({ where: '', where_columns: ['x'] })[0]?.path).toBe('where');
    expect(issues({ where: 'x', where_columns: [] })[0]?.path).toBe('where_columns');
  });

  it('field_aliases', () => {
    expect(issues({ field_aliases: { 'a.b.c': 'x' } })).toEqual([
      { path: 'field_aliases.a.b.c', message: 'keys are "table" or "table.field"' },
    ]);
    expect(issues({ field_aliases: { '.b': 'x' } })[0]?.message).toBe(
      'keys are "table" or "table.field"',
    );
    expect(issues({ field_aliases: { orders: '1st' } })).toEqual([
      { path: 'field_aliases.orders', message: 'an alias must be a plain identifier' },
    ]);
    expect(issues({ field_aliases: { 'orders.total': 'the total' } })[0]?.path).toBe(
      'field_aliases.orders.total',
    );
  });

  it('query', () => {
    expect(issues({ query: { nested_default_limit: -1 } })).toEqual([
      { path: 'query.nested_default_limit', message: 'Too small: expected number to be >=0' },
    ]);
    expect(issues({ query: { nested_default_limit: 1.5 } })[0]?.path).toBe(
      'query.nested_default_limit',
    );
    expect(issues({ query: { max_body_bytes: 255 } })).toEqual([
      { path: 'query.max_body_bytes', message: 'Too small: expected number to be >=256' },
    ]);
  });

  it('memory_cap_mb', () => {
    expect(issues({ memory_cap_mb: 0 })).toEqual([
      { path: 'memory_cap_mb', message: 'Too small: expected number to be >0' },
    ]);
    expect(issues({ memory_cap_mb: '1g' })[0]?.path).toBe('memory_cap_mb');
  });

  it('sync', () => {
    expect(
      issues({ sync: { mode: 'push', interval: 0, safety_net: -1, change_column: '' } }),
    ).toEqual([
      { path: 'sync.mode', message: 'Invalid option: expected one of "cdc"|"poll"' },
      { path: 'sync.interval', message: 'Too small: expected number to be >0' },
      { path: 'sync.safety_net', message: 'Too small: expected number to be >=0' },
      {
        path: 'sync.change_column',
        message: 'Too small: expected string to have >=1 characters',
      },
    ]);
  });

  it('cdc_reconnect_policy', () => {
    expect(issues({ cdc_reconnect_policy: 'retry' })).toEqual([
      {
        path: 'cdc_reconnect_policy',
        message: 'Invalid option: expected one of "resume"|"shutdown"',
      },
    ]);
  });

  it('lists every problem at once, and the error message names each path', () => {
    const found = issues({
      tables: [{ name: 'a', columns: { include: ['x'], exclude: ['y'] } }, { name: 'a' }],
      query: { nested_default_limit: -5 },
      cdc_reconnect_policy: 'never',
    });
    expect(found.map((issue) => issue.path)).toEqual(
      expect.arrayContaining([
        'cdc_reconnect_policy',
        'query.nested_default_limit',
        'tables[0].columns',
      ]),
    );
    const error = new SchemaConfigError(found);
    expect(error.message).toMatch(/^Invalid schema config:\n/);
    for (const issue of found)
      expect(error.message).toContain(`  - ${issue.path}: ${issue.message}`);
  });
});

describe('the schema config as the OpenAPI document shows it', () => {
  const documented = schemaConfigJsonSchema('The schema config.');
  const accepts = (input: unknown) => Value.Check(documented as TSchema, input);

  it('keeps the description it is given and none of our messages', () => {
    expect(documented.description).toBe('The schema config.');
    expect(JSON.stringify(documented)).not.toContain('x-error-message');
  });

  it('accepts what parseSchemaConfig accepts, and refuses what it refuses key by key', () => {
    const valid: unknown[] = [
      {},
      { tables: [{ name: 'a', columns: { include: ['x'] }, refresh_interval: 5 }] },
      { field_aliases: { orders: 'sales', 'orders.total': 'amount' }, memory_cap_mb: null },
      { query: { max_rows: 10 }, sync: { mode: 'poll', change_column: 'updated_at' } },
    ];
    const invalid: unknown[] = [
      'tables: []',
      { bogus: 1 },
      { tables: [] },
      { tables: [{ name: 'a', columns: { include: ['x'], exclude: ['y'] } }] },
      { tables: [{ name: 'v', refresh_interval: 0.5 }] },
      { field_aliases: { 'a.b.c': 'x' } },
      { field_aliases: { orders: '1st' } },
      { query: { nested_default_limit: 1.5 } },
      { memory_cap_mb: 0 },
      { sync: { mode: 'push' } },
      { cdc_reconnect_policy: 'retry' },
    ];
    for (const input of valid) {
      expect(accepts(input), JSON.stringify(input)).toBe(true);
      expect(() => parseSchemaConfig(input)).not.toThrow();
    }
    for (const input of invalid) {
      expect(accepts(input), JSON.stringify(input)).toBe(false);
      expect(issues(input).length).toBeGreaterThan(0);
    }
  });
});
