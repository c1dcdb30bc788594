import {
  type ColumnType,
  type CompiledColumn,
  type CompiledRelation,
  type CompiledSchema,
  type CompiledTable,
  type ElementType,
  ENGINE_ERRORS,
} from '@replix/engine';
import { enumValues } from '@replix/sources';

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Names the document itself uses in `components.schemas`; a table never takes one. */
const ERROR_RESPONSE = 'ErrorResponse';
const QUERY_RESPONSE = 'QueryResponse';
const RESERVED_MODEL_NAMES: ReadonlySet<string> = new Set([ERROR_RESPONSE, QUERY_RESPONSE]);
/** OpenAPI allows only these characters in component names. */
const INVALID_COMPONENT_CHARS = /[^A-Za-z0-9._-]/g;
/** Keys JavaScript objects order before all others, whatever the insertion order. */
const INTEGER_LIKE = /^[0-9]+$/;
/** A table name the query language takes without quoting, usable in the example query. */
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** Sorts by UTF-16 code units, as `CompiledSchema.tables` does: the same everywhere. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `components.schemas` key of every table: its API name, or, when that is one of the
 * document's own schema names, not a valid component name, or all digits (which an object
 * would not keep in sorted order), `Table_<name>` with invalid characters replaced by `_`
 * (and `_2`, `_3`, … on a clash). Tables whose own name is usable are assigned first, so a
 * derived key never takes a real table's name.
 */
function modelNames(tables: readonly CompiledTable[]): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set(RESERVED_MODEL_NAMES);
  const sorted = [...tables].sort((a, b) => byCodeUnits(a.name, b.name));
  const derived: CompiledTable[] = [];
  for (const table of sorted) {
    const valid =
      table.name.replace(INVALID_COMPONENT_CHARS, '_') === table.name &&
      !INTEGER_LIKE.test(table.name);
    if (valid && !used.has(table.name)) {
      names.set(table.name, table.name);
      used.add(table.name);
    } else {
      derived.push(table);
    }
  }
  for (const table of derived) {
    const base = `Table_${table.name.replace(INVALID_COMPONENT_CHARS, '_')}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    names.set(table.name, name);
    used.add(name);
  }
  return names;
}

/** The JSON Schema of a non-null value of each column type (docs/instance-api.md, "Data types"). */
function valueSchema(
  type: ColumnType,
  elementType?: ElementType,
): { type: string; extra: JsonObject; note: string } {
  switch (type) {
    case 'int':
      return { type: 'integer', extra: {}, note: '' };
    case 'float':
      return { type: 'number', extra: {}, note: '' };
    case 'bigint':
      return {
        type: 'integer',
        extra: {},
        note: 'A 64-bit integer written with every digit kept, even beyond 2^53: parse it with an exact-integer JSON reader.',
      };
    case 'decimal':
      return {
        type: 'number',
        extra: {},
        note: 'An exact decimal written with every digit kept (scale included): parse it with an exact-decimal JSON reader.',
      };
    case 'time':
      return { type: 'number', extra: {}, note: 'A time in seconds, with up to six decimals.' };
    case 'boolean':
      return { type: 'boolean', extra: {}, note: '' };
    case 'string':
      return { type: 'string', extra: {}, note: '' };
    case 'json':
      return {
        type: 'string',
        extra: { contentMediaType: 'application/json' },
        note: 'The JSON value serialized as text.',
      };
    case 'date':
      return { type: 'string', extra: { format: 'date' }, note: 'A date, `YYYY-MM-DD`.' };
    case 'timestamp':
      return {
        type: 'string',
        extra: { format: 'date-time' },
        note: 'An instant in ISO 8601 UTC: with milliseconds (`2024-01-02T03:04:05.000Z`) when the source column keeps 0 to 3 fractional digits, with microseconds (`2024-01-02T03:04:05.000000Z`) when it keeps 4 to 6.',
      };
    case 'binary':
      return {
        type: 'string',
        extra: { pattern: '^(?:[0-9a-f]{2})*$' },
        note: 'The bytes as lowercase hex, two digits per byte.',
      };
    case 'array': {
      // A PostgreSQL array may have any number of dimensions: an item is an element or a
      // nested array of them.
      const element = valueSchema(elementType ?? 'string');
      // The connector writes array timestamps with microseconds unless declared coarser.
      const elementNote =
        elementType === 'timestamp'
          ? 'instants in ISO 8601 UTC, with 6 fraction digits unless the type declares 0 to 3'
          : element.note.replace(/\.$/, '');
      return {
        type: 'array',
        extra: { items: { type: [element.type, 'array', 'null'], ...element.extra } },
        note: `An array of ${elementType ?? 'string'} elements${elementNote ? ` (${elementNote})` : ''}; a multidimensional array nests arrays; a NULL element is null.`,
      };
    }
  }
}

function columnProperty(table: CompiledTable, column: CompiledColumn): JsonObject {
  const value = valueSchema(column.type, column.elementType);
  const parts = [`Source column \`${column.sourceName}\` (${column.sourceType}).`];
  const keyPosition = table.primaryKey.indexOf(column.index);
  if (keyPosition >= 0) {
    parts.push(
      table.primaryKey.length === 1
        ? 'The primary key.'
        : `Part ${keyPosition + 1} of ${table.primaryKey.length} of the primary key.`,
    );
  }
  if (value.note) parts.push(value.note);
  // A MySQL ENUM's values, as its source type lists them (`enum('G','PG')`).
  const choices = /^enum\(/i.test(column.sourceType) ? enumValues(column.sourceType) : [];
  if (choices.length > 0) {
    parts.push("One of the ENUM's values (or '', which MySQL stores for an invalid one).");
  }
  if (column.nullable) parts.push('Null when the source value is NULL.');
  return {
    type: column.nullable ? [value.type, 'null'] : value.type,
    ...value.extra,
    ...(choices.length > 0 ? { enum: [...choices, '', ...(column.nullable ? [null] : [])] } : {}),
    description: parts.join(' '),
  };
}

function relationProperty(
  table: CompiledTable,
  relation: CompiledRelation,
  target: CompiledTable | undefined,
  targetModel: string,
): JsonObject {
  const local = relation.localColumns.map((i) => `\`${table.columns[i]?.name ?? '?'}\``);
  const remote = relation.targetColumns.map(
    (i) => `\`${relation.target}.${target?.columns[i]?.name ?? '?'}\``,
  );
  const link =
    relation.kind === 'forward'
      ? `${local.join(', ')} → ${remote.join(', ')}`
      : `${remote.join(', ')} → ${local.join(', ')}`;
  const join = `through foreign key \`${relation.constraintName}\` (${link})`;
  if (relation.kind === 'forward') {
    return {
      oneOf: [ref(targetModel), { type: 'null' }],
      description: `Forward relation to the \`${relation.target}\` row this row references, ${join}; null when there is none. Present only when selected with a nested selection.`,
    };
  }
  return {
    type: 'array',
    items: ref(targetModel),
    description: `Reverse relation: the \`${relation.target}\` rows that reference this row, ${join}. Present only when selected with a nested selection.`,
  };
}

function tableModel(
  table: CompiledTable,
  schema: CompiledSchema,
  names: ReadonlyMap<string, string>,
): JsonObject {
  const properties: JsonObject = {};
  for (const column of table.columns) properties[column.name] = columnProperty(table, column);
  // Relations by name: their compiled order follows the source's foreign-key discovery order.
  const relations = [...table.relations].sort((a, b) => byCodeUnits(a.name, b.name));
  for (const relation of relations) {
    properties[relation.name] = relationProperty(
      table,
      relation,
      schema.tablesByName.get(relation.target),
      names.get(relation.target) ?? relation.target,
    );
  }
  const primaryKey = table.primaryKey.map((i) => table.columns[i]?.name ?? '?');
  const keyText = primaryKey.length
    ? `Primary key: ${primaryKey.map((name) => `\`${name}\``).join(', ')}.`
    : 'No primary key.';
  return {
    type: 'object',
    description: `A row of table \`${table.name}\` (source table \`${table.sourceName}\`). ${keyText} Query results hold the selected fields only; relations appear when selected.`,
    'x-primary-key': primaryKey,
    properties,
    required: table.columns.map((column) => column.name),
  };
}

function errorResponseSchema(): JsonObject {
  return {
    type: 'object',
    description: 'The error envelope of every failed request except 503 and 304.',
    properties: {
      error: {
        type: 'object',
        properties: {
          code: {
            type: 'string',
            description:
              'A stable machine-readable code: parse_error, executor_error, unauthorized, unknown_table, reload_busy, cap_degraded, payload_too_large, or the code of an internal failure.',
          },
          message: { type: 'string', description: 'A human-readable explanation.' },
        },
        required: ['code', 'message'],
      },
    },
    required: ['error'],
  };
}

function queryResponseSchema(): JsonObject {
  const integer = (description: string): JsonObject => ({
    type: 'integer',
    minimum: 0,
    description,
  });
  return {
    type: 'object',
    description: 'The success envelope of a query.',
    properties: {
      data: {
        type: 'array',
        items: { type: 'object' },
        description:
          "The result rows: the selected fields of the queried table's model (see `meta.table`), plus aggregate keys (`count`, `count_distinct_<field>`, `sum_<field>`, `avg_<field>`, `min_<field>`, `max_<field>`) when aggregates are selected.",
      },
      meta: {
        type: 'object',
        properties: {
          table: { type: 'string', description: 'The queried table.' },
          query: {
            type: 'object',
            description:
              'Echo of the parsed query parameters that the query specified (fields, aggregates, filter, having, order_by, limit, offset); `limit` only when LIMIT was explicit.',
          },
          pagination: {
            type: 'object',
            properties: {
              count: integer('Rows in this page.'),
              total_matched: integer('Rows matching the filter before LIMIT and OFFSET.'),
              has_more: {
                type: 'boolean',
                description: 'Whether more rows exist beyond this page.',
              },
              limit: integer('The effective limit.'),
              next_cursor: {
                type: 'string',
                description:
                  "The cursor of the next page under AFTER paging (pass it as `AFTER '<cursor>'`); absent at the end.",
              },
            },
            required: ['count', 'total_matched', 'has_more', 'limit'],
          },
          timing_ms: {
            type: 'number',
            minimum: 0,
            description:
              "The engine's time for the query in milliseconds: planning it (or binding its values into the cached plan of its shape) and running it; not the wait for a turn, nor sending the answer.",
          },
          snapshot: {
            type: 'object',
            description: 'The snapshot that served the query.',
            properties: {
              swap_count: integer('Increments on every snapshot refresh.'),
              age_ms: integer('Age of the snapshot in milliseconds.'),
            },
            required: ['swap_count', 'age_ms'],
          },
          version: {
            type: 'string',
            description:
              'Engine version `<release>-<build hash>`; also in the `X-Service-Version` header.',
          },
        },
        required: ['table', 'query', 'pagination', 'timing_ms', 'snapshot', 'version'],
      },
    },
    required: ['data', 'meta'],
  };
}

const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });

function errorResponse(description: string): JsonObject {
  return { description, content: json(ref(ERROR_RESPONSE)) };
}

function objectResponse(description: string, body: string): JsonObject {
  return { description, content: json({ type: 'object', description: body }) };
}

const statusDocument = (): JsonObject =>
  objectResponse(
    'The instance is starting up or unhealthy.',
    'The instance status document (not an error envelope).',
  );

function codesOf(status: number): string {
  return Object.entries(ENGINE_ERRORS)
    .filter(([, error]) => error.status === status)
    .map(([code, error]) => `\`${code}\`: ${error.doc}`)
    .join(' ');
}

/** The fields of a rate-limited instance's answers (docs/instance-api.md, "Rate limits"). */
const RATE_LIMIT_HEADERS: JsonObject = {
  'RateLimit-Policy': {
    description:
      'With a rate limit: the key\'s policy, `"default";q=<requests>;w=<window seconds>` (draft-ietf-httpapi-ratelimit-headers-10).',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'With a rate limit: `"default";r=<requests left now>;t=<seconds until the whole quota is back>`.',
    schema: { type: 'string' },
  },
};

function queryResponses(get: boolean): JsonObject {
  const versionHeader: JsonObject = {
    description: 'The engine version, as `meta.version`.',
    schema: { type: 'string' },
  };
  const responses: JsonObject = {
    '200': {
      description: 'The query result.',
      headers: {
        ...(get
          ? {
              ETag: {
                description:
                  'Opaque tag of this result, derived from instance boot, snapshot generation and query; send it back in `If-None-Match`.',
                schema: { type: 'string' },
              },
            }
          : {}),
        'X-Service-Version': versionHeader,
        ...RATE_LIMIT_HEADERS,
      },
      content: {
        ...json(ref(QUERY_RESPONSE)),
        ...(get
          ? {
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description:
                    'With `Accept: text/event-stream`, a live query: Server-Sent Events, each `data` a success envelope and each `id` `<generation>.<boot id>`; the current result first, then one event each time the result changes. Two events end the stream, each with an error envelope as its `data`: `event: query-error` for good (a bad query, a result over a budget, a revoked key: do not reconnect), and `event: query-retry` after a `retry: <ms>` field for a passing reason (the instance closing for a deploy, a long overload: reconnect after that delay with `Last-Event-ID`). A stream that ends without either, or is cut, may be resumed the same way. Refusals before the stream starts are the usual error answers; 429 and 503 carry `Retry-After`.',
                },
              },
            }
          : {}),
      },
    },
  };
  if (get) {
    responses['304'] = {
      description:
        'Not modified: `If-None-Match` matched and the snapshot has not refreshed nor the instance restarted. No body.',
    };
  }
  responses['400'] = errorResponse(`Invalid query. ${codesOf(400)}`);
  responses['401'] = errorResponse('`unauthorized`: missing or invalid API key.');
  responses['404'] = errorResponse(`${codesOf(404)}`);
  if (!get) {
    responses['413'] = errorResponse(
      '`payload_too_large`: the query body exceeds the configured size limit.',
    );
  }
  responses['429'] = {
    ...errorResponse(
      '`too_many_requests`: the key is over its rate limit, or its clients hold their share of answers not yet read, or the instance is busy with other queries; retry after `Retry-After` seconds.',
    ),
    headers: {
      'Retry-After': {
        description: 'Whole seconds to wait before retrying.',
        schema: { type: 'integer' },
      },
      ...RATE_LIMIT_HEADERS,
    },
  };
  responses['500'] = errorResponse('Internal failure.');
  responses['503'] = statusDocument();
  return responses;
}

function queryDescription(exampleTable: string | undefined): string {
  const lines = [
    'Runs a query against the current snapshot. Shape:',
    "`[@lenient] <table> [(<filter>)] { <selection> } [HAVING <condition>] [ORDER BY <sort>] [LIMIT <n>] [OFFSET <n>] [AFTER '<cursor>']`.",
    "Aggregates: `COUNT(*)`, `COUNT(field)`, `COUNT(DISTINCT field)`, `SUM`, `AVG`, `MIN`, `MAX`; HAVING tests a grouped selection's fields and aggregates. Array fields: `CONTAINS (…)`, `CONTAINED BY (…)`, `OVERLAPS (…)`, `CARDINALITY(field)`. JSON fields: a path `field->'key'->0` in selections, filters and ORDER BY.",
    "The tables are the models in `components.schemas` that carry `x-primary-key`; each model's description names its table.",
  ];
  if (exampleTable) lines.push(`Example: \`${exampleTable} { * } LIMIT 10\`.`);
  return lines.join(' ');
}

function paths(schema: CompiledSchema): JsonObject {
  const security: Json = [{ bearerAuth: [] }];
  const first = schema.tables
    .map((t) => t.name)
    .sort(byCodeUnits)
    .find((name) => PLAIN_IDENTIFIER.test(name));
  const example: JsonObject = first === undefined ? {} : { example: `${first} { * } LIMIT 10` };
  return {
    '/query': {
      post: {
        operationId: 'postQuery',
        summary: 'Run a query',
        description: queryDescription(first),
        security,
        requestBody: {
          required: true,
          description: 'The query as plain text (not JSON); `Content-Type` is not required.',
          content: { 'text/plain': { schema: { type: 'string' }, ...example } },
        },
        responses: queryResponses(false),
      },
      get: {
        operationId: 'getQuery',
        summary: 'Run a query as a cacheable read',
        description: `${queryDescription(first)} Use POST for queries too long for a URL.`,
        security,
        parameters: [
          {
            name: 'q',
            in: 'query',
            required: true,
            description: 'The query text, URL-encoded.',
            schema: { type: 'string' },
            ...example,
          },
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            description:
              'ETag(s) of a cached result: one tag, a comma-separated list, or weak `W/` tags.',
            schema: { type: 'string' },
          },
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            description:
              'For a live query: the id of the last event received; the first event is left out while the result is still the one of that id.',
            schema: { type: 'string' },
          },
        ],
        responses: queryResponses(true),
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This OpenAPI document',
        responses: {
          '200': objectResponse('The OpenAPI 3.1 document.', 'This document.'),
        },
      },
    },
    '/health': {
      get: {
        operationId: 'getHealth',
        summary: 'Readiness',
        responses: {
          '200': objectResponse('The instance is ready to serve queries.', 'Readiness status.'),
          '503': statusDocument(),
        },
      },
    },
    '/health/detail': {
      get: {
        operationId: 'getHealthDetail',
        security,
        summary: 'Detailed health',
        responses: {
          '200': objectResponse(
            'Detailed health.',
            'Snapshot, replication, memory and live-query status.',
          ),
        },
      },
    },
    '/schema': {
      get: {
        operationId: 'getSchema',
        security,
        summary: 'Compiled schema',
        responses: {
          '200': objectResponse(
            'The compiled schema.',
            'Tables with their columns (name, type, nullable, key) and relations.',
          ),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        security,
        summary: 'Metrics',
        responses: {
          '200': {
            description: 'Metrics in the Prometheus text exposition format.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    '/reload': {
      post: {
        operationId: 'reload',
        security,
        summary: 'Reload the snapshot from the source',
        parameters: [
          {
            name: 'wait',
            in: 'query',
            required: false,
            description: '`true` to answer only once the reload has been swapped in.',
            schema: { type: 'string', enum: ['true', 'false'] },
          },
        ],
        responses: {
          '200': objectResponse(
            'With `?wait=true`: the reload ran and was swapped in.',
            'Reload result.',
          ),
          '202': objectResponse(
            'The reload started; `/health/detail` shows when it completes.',
            'Reload status.',
          ),
          '409': errorResponse(
            '`reload_busy`: a sync flush or safety-net reload is mid-cycle; retry after it completes. `cap_degraded`: the instance is cap-degraded; resize it instead.',
          ),
        },
      },
    },
    '/replication/pause': {
      post: {
        operationId: 'pauseReplication',
        security,
        summary: 'Pause replication',
        responses: {
          '200': objectResponse('Replication is paused.', 'Replication status.'),
        },
      },
    },
    '/replication/resume': {
      post: {
        operationId: 'resumeReplication',
        security,
        summary: 'Resume replication',
        responses: {
          '200': objectResponse('Replication is resumed.', 'Replication status.'),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document an instance serves at `GET /openapi.json` (docs/instance-api.md): its
 * endpoints, the query and error envelopes, and one model per table named after the table's
 * API name, with `components.schemas` keys in sorted order. Pure and deterministic: the same
 * schema and options give the same JSON text.
 *
 * @example
 * const doc = generateOpenApi(schema, { version: '1.4.0-3f9c2ab' });
 * reply.send(JSON.stringify(doc));
 */
export function generateOpenApi(
  schema: CompiledSchema,
  options: { version: string; title?: string },
): object {
  const names = modelNames(schema.tables);
  const models: JsonObject = {
    [ERROR_RESPONSE]: errorResponseSchema(),
    [QUERY_RESPONSE]: queryResponseSchema(),
  };
  for (const table of schema.tables) {
    models[names.get(table.name) ?? table.name] = tableModel(table, schema, names);
  }
  const schemas = Object.fromEntries(Object.entries(models).sort(([a], [b]) => byCodeUnits(a, b)));

  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'Replix instance',
      version: options.version,
      description:
        'Read-only query API over an in-memory snapshot of a relational database. Each table is described by the model of the same name in `components.schemas`.',
    },
    paths: paths(schema),
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'rxk_<keyId>.<hmac>',
          description: 'An API key of this instance: `Authorization: Bearer rxk_<keyId>.<hmac>`.',
        },
      },
    },
  };
}
