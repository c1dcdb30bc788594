import {
  type ColumnType,
  type CompiledSchema,
  compileSchema,
  type ElementType,
  GenerationBuilder,
  parseSchemaConfig,
  QueryEngine,
  type SourceColumn,
  type SourceSchema,
  type SourceTable,
} from '@replix/engine';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { generateOpenApi } from '../src/http/openapi.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON document is walked freely.
type Doc = any;

/** Every column type with a source type a connector might report, and a canonical value. */
const TYPES: readonly {
  type: ColumnType;
  sourceType: string;
  value: unknown;
  scale?: number;
  elementType?: ElementType;
}[] = [
  { type: 'int', sourceType: 'int(11)', value: 7 },
  { type: 'bigint', sourceType: 'bigint unsigned', value: '9007199254740993' },
  { type: 'float', sourceType: 'double', value: 1.5 },
  { type: 'decimal', sourceType: 'numeric(12,2)', value: '12.30', scale: 2 },
  { type: 'boolean', sourceType: 'tinyint(1)', value: true },
  { type: 'string', sourceType: 'varchar(40)', value: 'Σωκράτης' },
  { type: 'json', sourceType: 'jsonb', value: '{"a":[1,2]}' },
  { type: 'date', sourceType: 'date', value: '2024-02-29' },
  { type: 'timestamp', sourceType: 'timestamptz', value: 1_700_000_000_123 },
  { type: 'time', sourceType: 'time', value: 3661 },
  { type: 'binary', sourceType: 'bytea', value: new Uint8Array([0, 171, 255]) },
  {
    type: 'array',
    sourceType: 'bigint[]',
    value: '[[1,null],[9007199254740993,2]]',
    elementType: 'bigint',
  },
];

function col(name: string, type: ColumnType, nullable: boolean, sourceType: string = type) {
  const { scale, elementType } = TYPES.find((t) => t.type === type) ?? {};
  return {
    name,
    type,
    nullable,
    sourceType,
    ...(scale === undefined ? {} : { scale }),
    ...(elementType === undefined ? {} : { elementType }),
  };
}

function table(name: string, columns: SourceColumn[], extra: Partial<SourceTable> = {}) {
  return {
    name,
    columns,
    primaryKey: ['id'],
    uniqueKeys: [],
    foreignKeys: [],
    estimatedRows: null,
    ...extra,
  };
}

const factColumns: SourceColumn[] = [
  col('id', 'int', false, 'int(11)'),
  ...TYPES.flatMap(({ type, sourceType }) => [
    col(`${type}_req`, type, false, sourceType),
    col(`${type}_opt`, type, true, sourceType),
  ]),
];

/** Listed out of name order on purpose; `ErrorResponse` collides with a document schema. */
const source: SourceSchema = {
  tables: [
    table('zebra_facts', factColumns),
    table(
      'orders',
      [col('id', 'bigint', false), col('customer_id', 'int', true), col('note', 'string', true)],
      {
        foreignKeys: [
          {
            name: 'fk_orders_customer',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table(
      'line_items',
      [col('order_id', 'bigint', false), col('line_no', 'int', false), col('qty', 'int', false)],
      {
        primaryKey: ['order_id', 'line_no'],
        foreignKeys: [
          {
            name: 'fk_line_order',
            columns: ['order_id'],
            referencedTable: 'orders',
            referencedColumns: ['id'],
          },
        ],
      },
    ),
    table('customers', [col('id', 'int', false, 'integer'), col('name', 'string', false)]),
    table('ErrorResponse', [col('id', 'int', false)]),
    table('audit_log', [col('at', 'timestamp', false), col('what', 'string', true)], {
      primaryKey: [],
    }),
  ],
};

const MODEL_KEYS = [
  'ErrorResponse',
  'QueryResponse',
  'Table_ErrorResponse',
  'audit_log',
  'customers',
  'line_items',
  'orders',
  'zebra_facts',
];

function compile(config: unknown = {}, schemaSource: SourceSchema = source): CompiledSchema {
  return compileSchema(schemaSource, parseSchemaConfig(config));
}

/** The document as a client receives it: through JSON text. */
function generate(schema: CompiledSchema = compile(), title?: string): Doc {
  const options = title === undefined ? { version: '1.2.3-abc1234' } : { version: '1.2.3', title };
  return JSON.parse(JSON.stringify(generateOpenApi(schema, options)));
}

async function expectValid(doc: Doc): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc));
  expect(result.errors).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
}

/**
 * The JSON Schema subset the document uses, checked against a value: enough to prove that the
 * engine's real output fits the models. Returns the paths that do not fit.
 */
function mismatches(doc: Doc, schema: Doc, value: unknown, path = '$'): string[] {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    return mismatches(doc, doc.components.schemas[name], value, path);
  }
  if (schema.oneOf) {
    const fits = schema.oneOf.filter((s: Doc) => mismatches(doc, s, value, path).length === 0);
    return fits.length === 1 ? [] : [`${path}: fits ${fits.length} of oneOf`];
  }
  const errors: string[] = [];
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const actual =
      value === null
        ? 'null'
        : Array.isArray(value)
          ? 'array'
          : Number.isInteger(value) && types.includes('integer')
            ? 'integer'
            : typeof value;
    if (!types.includes(actual)) return [`${path}: ${actual} is not ${types.join('|')}`];
  }
  if (typeof value === 'string') {
    if (schema.format === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value)) errors.push(path);
    if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) errors.push(path);
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) errors.push(path);
    if (schema.contentMediaType === 'application/json') JSON.parse(value);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      errors.push(...mismatches(doc, schema.items, item, `${path}[${i}]`));
    });
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) {
      if (!(key in record)) errors.push(`${path}.${key}: missing`);
    }
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (key in record) errors.push(...mismatches(doc, property, record[key], `${path}.${key}`));
    }
  }
  return errors;
}

describe('generateOpenApi', () => {
  it('produces a document the OpenAPI 3.1 validator accepts, refs included', async () => {
    await expectValid(generate());
  });

  it('uses a validator that catches broken refs and bad model names', async () => {
    const broken = generate();
    broken.components.schemas.orders.properties.customer.oneOf[0].$ref =
      '#/components/schemas/nobody';
    expect((await new Validator().validate(broken)).valid).toBe(false);
    const badName = generate();
    badName.components.schemas['order items'] = { type: 'object' };
    expect((await new Validator().validate(badName)).valid).toBe(false);
  });

  it('fills in info, the bearer scheme, and applies it to /query', () => {
    const doc = generate();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Replix instance');
    expect(doc.info.version).toBe('1.2.3-abc1234');
    expect(generate(compile(), 'Shop API').info).toMatchObject({
      title: 'Shop API',
      version: '1.2.3',
    });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.paths['/query'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/query'].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it('describes every instance endpoint', () => {
    const doc = generate();
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual([
      'POST /query',
      'GET /query',
      'GET /openapi.json',
      'GET /health',
      'GET /health/detail',
      'GET /schema',
      'GET /metrics',
      'POST /reload',
      'POST /replication/pause',
      'POST /replication/resume',
    ]);
    const ids = Object.values(doc.paths).flatMap((item) =>
      Object.values(item as Doc).map((op) => (op as Doc).operationId),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/metrics'].get.responses['200'].content).toHaveProperty('text/plain');
    expect(doc.paths['/health'].get.responses['200'].content['application/json'].schema.type).toBe(
      'object',
    );
    const reload = doc.paths['/reload'].post.responses;
    expect(Object.keys(reload)).toEqual(['200', '202', '409']);
    expect(reload['409'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorResponse',
    });
    expect(reload['409'].description).toContain('reload_busy');
    expect(reload['409'].description).toContain('cap_degraded');
  });

  it('describes POST /query: plain-text body, envelope and error responses', () => {
    const post = generate().paths['/query'].post;
    expect(post.requestBody.required).toBe(true);
    expect(Object.keys(post.requestBody.content)).toEqual(['text/plain']);
    expect(post.requestBody.content['text/plain'].schema).toEqual({ type: 'string' });
    expect(Object.keys(post.responses)).toEqual([
      '200',
      '400',
      '401',
      '404',
      '413',
      '429',
      '500',
      '503',
    ]);
    expect(post.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/QueryResponse',
    });
    for (const status of ['400', '401', '404', '413', '429', '500']) {
      expect(post.responses[status].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ErrorResponse',
      });
    }
    expect(post.responses['400'].description).toContain('parse_error');
    expect(post.responses['400'].description).toContain('executor_error');
    expect(post.responses['404'].description).toContain('unknown_table');
    expect(post.responses['503'].content['application/json'].schema.type).toBe('object');
    // Rate limits: the fields on answers, and Retry-After on the 429.
    expect(Object.keys(post.responses['200'].headers)).toEqual(
      expect.arrayContaining(['RateLimit', 'RateLimit-Policy']),
    );
    expect(post.responses['429'].description).toContain('too_many_requests');
    expect(Object.keys(post.responses['429'].headers)).toEqual([
      'Retry-After',
      'RateLimit-Policy',
      'RateLimit',
    ]);
  });

  it('describes GET /query: q, If-None-Match, ETag and 304, and live queries', () => {
    const get = generate().paths['/query'].get;
    expect(get.parameters).toEqual([
      expect.objectContaining({
        name: 'q',
        in: 'query',
        required: true,
        schema: { type: 'string' },
      }),
      expect.objectContaining({ name: 'If-None-Match', in: 'header', required: false }),
      expect.objectContaining({ name: 'Last-Event-ID', in: 'header', required: false }),
    ]);
    const stream = get.responses['200'].content['text/event-stream'].schema;
    expect(stream.type).toBe('string');
    // Clients tell a final error from a passing one by the event's name.
    expect(stream.description).toContain('`event: query-error` for good');
    expect(stream.description).toContain('`event: query-retry` after a `retry: <ms>` field');
    expect(generate().paths['/query'].post.responses['200'].content).not.toHaveProperty(
      'text/event-stream',
    );
    expect(get.responses['200'].headers.ETag.schema).toEqual({ type: 'string' });
    expect(get.responses['304']).not.toHaveProperty('content');
    expect(get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/QueryResponse',
    });
    expect(get.responses['401'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorResponse',
    });
  });

  it('defines the error and success envelopes', () => {
    const { ErrorResponse, QueryResponse } = generate().components.schemas;
    expect(ErrorResponse.required).toEqual(['error']);
    expect(ErrorResponse.properties.error.required).toEqual(['code', 'message']);
    expect(QueryResponse.properties.data.type).toBe('array');
    const meta = QueryResponse.properties.meta;
    expect(Object.keys(meta.properties)).toEqual([
      'table',
      'query',
      'pagination',
      'timing_ms',
      'snapshot',
      'version',
    ]);
    expect(Object.keys(meta.properties.pagination.properties)).toEqual([
      'count',
      'total_matched',
      'has_more',
      'limit',
      'next_cursor',
    ]);
    expect(meta.properties.pagination.required).not.toContain('next_cursor');
    expect(Object.keys(meta.properties.snapshot.properties)).toEqual(['swap_count', 'age_ms']);
  });

  it('emits the models in alphabetical order, whatever the table order', () => {
    const schema = compile();
    expect(Object.keys(generate(schema).components.schemas)).toEqual(MODEL_KEYS);
    const reversed: CompiledSchema = { ...schema, tables: [...schema.tables].reverse() };
    const text = JSON.stringify(generateOpenApi(reversed, { version: '1' }));
    expect(Object.keys(JSON.parse(text).components.schemas)).toEqual(MODEL_KEYS);
    expect(text).toBe(JSON.stringify(generateOpenApi(schema, { version: '1' })));
  });

  it('maps every column type to its JSON type, nullable or not', () => {
    const model = generate().components.schemas.zebra_facts;
    const expected: Record<ColumnType, Record<string, unknown>> = {
      int: { type: 'integer' },
      bigint: { type: 'integer' },
      float: { type: 'number' },
      decimal: { type: 'number' },
      time: { type: 'number' },
      boolean: { type: 'boolean' },
      string: { type: 'string' },
      json: { type: 'string', contentMediaType: 'application/json' },
      date: { type: 'string', format: 'date' },
      timestamp: { type: 'string', format: 'date-time' },
      binary: { type: 'string' },
      array: { type: 'array', items: { type: ['integer', 'array', 'null'] } },
    };
    for (const { type, sourceType } of TYPES) {
      const { type: jsonType, ...extra } = expected[type];
      const required = model.properties[`${type}_req`];
      const optional = model.properties[`${type}_opt`];
      expect(required, type).toMatchObject({ type: jsonType, ...extra });
      expect(optional, type).toMatchObject({ type: [jsonType, 'null'], ...extra });
      expect(required.description, type).toContain(`\`${type}_req\` (${sourceType})`);
    }
    expect(model.properties.bigint_req.description).toContain('every digit');
    expect(model.properties.decimal_opt.description).toContain('every digit');
    expect(model.properties.binary_req.description).toContain('lowercase hex');
    expect(model.properties.array_req.description).toContain('array of bigint elements');
    expect(model.properties.id.description).toContain('primary key');
    expect(model.properties.int_req.description).not.toContain('primary key');
    expect(model.required).toEqual(factColumns.map((c) => c.name));
    expect(Object.keys(model.properties)).toEqual(factColumns.map((c) => c.name));
  });

  it('models forward and reverse relations, outside required', () => {
    const { orders, customers, line_items } = generate().components.schemas;
    expect(orders.properties.customer).toMatchObject({
      oneOf: [{ $ref: '#/components/schemas/customers' }, { type: 'null' }],
    });
    expect(orders.properties.customer.description).toContain('fk_orders_customer');
    expect(orders.properties.line_items).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/line_items' },
    });
    expect(customers.properties.orders).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/orders' },
    });
    expect(line_items.properties.order.oneOf[0]).toEqual({ $ref: '#/components/schemas/orders' });
    expect(orders.required).toEqual(['id', 'customer_id', 'note']);
    expect(customers.required).toEqual(['id', 'name']);
    expect(line_items.required).toEqual(['order_id', 'line_no', 'qty']);
  });

  it('gives each model x-primary-key and a table description', () => {
    const schemas = generate().components.schemas;
    expect(schemas.orders['x-primary-key']).toEqual(['id']);
    expect(schemas.line_items['x-primary-key']).toEqual(['order_id', 'line_no']);
    expect(schemas.line_items.properties.line_no.description).toContain('primary key');
    expect(schemas.line_items.properties.qty.description).not.toContain('primary key');
    expect(schemas.audit_log['x-primary-key']).toEqual([]);
    expect(schemas.orders.description).toContain('`orders`');
    expect(schemas.Table_ErrorResponse.description).toContain('`ErrorResponse`');
    expect(schemas.Table_ErrorResponse['x-primary-key']).toEqual(['id']);
    expect(schemas.ErrorResponse.properties).toHaveProperty('error');
  });

  it('names models and refs after API names, aliases included', async () => {
    const doc = generate(
      compile({ field_aliases: { customers: 'clients', 'customers.name': 'full_name' } }),
    );
    await expectValid(doc);
    const { schemas } = doc.components;
    expect(Object.keys(schemas)).toEqual(
      MODEL_KEYS.map((k) => (k === 'customers' ? 'clients' : k)),
    );
    expect(schemas.orders.properties.customer.oneOf[0]).toEqual({
      $ref: '#/components/schemas/clients',
    });
    expect(schemas.clients.required).toEqual(['id', 'full_name']);
    expect(schemas.clients.properties.full_name.description).toContain('`name`');
    expect(schemas.clients.description).toContain('source table `customers`');
  });

  it('derives valid, unique keys for names OpenAPI or the document cannot use', async () => {
    const odd: SourceSchema = {
      tables: [
        table('QueryResponse', [col('id', 'int', false)]),
        table('Table_QueryResponse', [col('id', 'int', false)]),
        table('order items', [col('id', 'int', false)]),
        table('2024', [col('id', 'int', false)]),
        table('10', [col('id', 'int', false)]),
        table('b', [col('id', 'int', false), col('a_id', 'int', true)], {
          foreignKeys: [
            {
              name: 'fk_b',
              columns: ['a_id'],
              referencedTable: 'QueryResponse',
              referencedColumns: ['id'],
            },
          ],
        }),
      ],
    };
    const doc = generate(compile({}, odd));
    await expectValid(doc);
    const keys = Object.keys(doc.components.schemas);
    expect(keys).toEqual([
      'ErrorResponse',
      'QueryResponse',
      'Table_10',
      'Table_2024',
      'Table_QueryResponse',
      'Table_QueryResponse_2',
      'Table_order_items',
      'b',
    ]);
    expect(doc.components.schemas.Table_QueryResponse.description).toContain(
      'table `Table_QueryResponse`',
    );
    expect(doc.components.schemas.b.properties.a.oneOf[0]).toEqual({
      $ref: '#/components/schemas/Table_QueryResponse_2',
    });
    expect(doc.components.schemas.QueryResponse.properties).toHaveProperty('meta');
  });

  it('is deterministic: the same schema gives the same JSON text', () => {
    const first = JSON.stringify(generateOpenApi(compile(), { version: '2.0.0' }));
    const again = JSON.stringify(generateOpenApi(compile(), { version: '2.0.0' }));
    const shuffled = JSON.stringify(
      generateOpenApi(compile({}, { tables: [...source.tables].reverse() }), { version: '2.0.0' }),
    );
    expect(again).toBe(first);
    expect(shuffled).toBe(first);
  });

  it('fits what the engine really returns for every type and both relation kinds', () => {
    const schema = compile();
    const doc = generate(schema);
    const full = [1, ...TYPES.flatMap(({ value }) => [value, value])];
    const nulls = [2, ...TYPES.flatMap(({ value }) => [value, null])];
    const builder = new GenerationBuilder(schema);
    const rows: Record<string, unknown[][]> = {
      zebra_facts: [full, nulls],
      customers: [[1, 'Ada']],
      orders: [
        ['10', 1, 'first'],
        ['11', null, null],
      ],
      line_items: [['10', 1, 3]],
      ErrorResponse: [[1]],
      audit_log: [],
    };
    for (const [name, tableRows] of Object.entries(rows))
      builder.loader(name).appendRows(tableRows);
    const generation = builder.finish(1);
    const engine = new QueryEngine(schema);
    const meta = { version: '1.2.3-abc1234', swapCount: 3, ageMs: 12 };
    const queries: [string, string][] = [
      ['zebra_facts { * }', 'zebra_facts'],
      ['orders { ... }', 'orders'],
      ['customers { ... }', 'customers'],
      ['line_items { * order { * customer { * } } }', 'line_items'],
      ["orders { * } LIMIT 1 AFTER ''", 'orders'],
      ['ErrorResponse { * }', 'Table_ErrorResponse'],
    ];
    for (const [query, model] of queries) {
      const response = JSON.parse(engine.execute(generation, query, meta));
      expect(
        mismatches(doc, { $ref: '#/components/schemas/QueryResponse' }, response),
        query,
      ).toEqual([]);
      expect(response.data.length, query).toBeGreaterThan(0);
      expect(
        mismatches(
          doc,
          { type: 'array', items: { $ref: `#/components/schemas/${model}` } },
          response.data,
        ),
        query,
      ).toEqual([]);
    }
    // The checker itself rejects what does not fit.
    const wrong = { id: '1', name: null };
    expect(mismatches(doc, { $ref: '#/components/schemas/customers' }, wrong)).toHaveLength(2);
  });
});
