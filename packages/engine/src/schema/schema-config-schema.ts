import { type Static, Type } from 'typebox';

/**
 * The schema config as a JSON Schema (TypeBox): what `parseSchemaConfig` validates, and what the
 * control plane's OpenAPI document describes `schemaConfig` with. Every key is optional; a key
 * with a `default` gets it when absent. A message of our own for a rule is the `x-error-message`
 * of the schema the rule is on: one string, or one per keyword (`{ minimum: '…' }`).
 */

/**
 * The per-query budgets and their defaults (docs/limits.md lists them with the fixed caps).
 * An instance's size may lower `timeout_ms` further.
 */
export const QUERY_DEFAULTS = {
  nested_default_limit: 1000,
  max_body_bytes: 64 * 1024,
  /** Wall-clock time one query may run before it is stopped with `query_timeout`. */
  timeout_ms: 2000,
  /** Rows written into one answer, counted across every nesting level. */
  max_rows: 100_000,
  /** Bytes of one answer's JSON. */
  max_response_bytes: 16 * 1024 * 1024,
} as const;

/** Seconds between re-reads of a served view when its entry gives no `refresh_interval`. */
export const VIEW_REFRESH_DEFAULT_S = 60;
/** The shortest `refresh_interval`: a view is re-read whole, so not more often than this. */
export const VIEW_REFRESH_MIN_S = 1;

const Identifier = Type.String({ minLength: 1 });
const IdentifierList = Type.Array(Identifier, { minItems: 1 });
const Predicate = Type.String({ minLength: 1, description: 'A query-language condition.' });

const ColumnSelection = Type.Object(
  { include: Type.Optional(IdentifierList), exclude: Type.Optional(IdentifierList) },
  {
    additionalProperties: false,
    not: { required: ['include', 'exclude'] },
    description: 'The columns served: only `include`, or all but `exclude`.',
    'x-error-message': { not: 'give either include or exclude, not both' },
  },
);

const TableEntry = Type.Object(
  {
    name: Type.String({ minLength: 1, description: 'The table or view, as the source names it.' }),
    where: Type.Optional(Predicate),
    where_columns: Type.Optional(IdentifierList),
    refresh_interval: Type.Optional(
      Type.Number({
        minimum: VIEW_REFRESH_MIN_S,
        description: `Views only: seconds between re-reads (a view has no change stream); default ${VIEW_REFRESH_DEFAULT_S}.`,
        'x-error-message': { minimum: 'a view is re-read at most once a second' },
      }),
    ),
    columns: Type.Optional(ColumnSelection),
  },
  { additionalProperties: false },
);

const FieldAliases = Type.Record(
  Type.String(),
  Type.String({
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    'x-error-message': 'an alias must be a plain identifier',
  }),
  {
    propertyNames: {
      pattern: '^[^.]+(\\.[^.]+)?$',
      'x-error-message': 'keys are "table" or "table.field"',
    },
    description: 'Names served instead of the source\'s: keys are "table" or "table.field".',
  },
);

const QuerySettings = Type.Object(
  {
    nested_default_limit: Type.Optional(
      Type.Integer({ minimum: 0, default: QUERY_DEFAULTS.nested_default_limit }),
    ),
    max_body_bytes: Type.Optional(
      Type.Integer({ minimum: 256, maximum: 1024 * 1024, default: QUERY_DEFAULTS.max_body_bytes }),
    ),
    timeout_ms: Type.Optional(
      Type.Integer({ minimum: 10, maximum: 60_000, default: QUERY_DEFAULTS.timeout_ms }),
    ),
    max_rows: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000_000, default: QUERY_DEFAULTS.max_rows }),
    ),
    max_response_bytes: Type.Optional(
      Type.Integer({
        minimum: 1024,
        maximum: 1024 * 1024 * 1024,
        default: QUERY_DEFAULTS.max_response_bytes,
      }),
    ),
  },
  { additionalProperties: false, default: {} },
);

const SyncSettings = Type.Object(
  {
    mode: Type.Optional(Type.Enum(['cdc', 'poll'], { default: 'cdc' })),
    interval: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 1 })),
    safety_net: Type.Optional(Type.Number({ minimum: 0, default: 0 })),
    change_column: Type.Optional(Identifier),
  },
  { additionalProperties: false, default: {} },
);

export const SchemaConfigSchema = Type.Object(
  {
    tables: Type.Optional(
      Type.Array(TableEntry, {
        minItems: 1,
        description: 'The tables and views served; absent: every table of the source schema.',
      }),
    ),
    where: Type.Optional(Predicate),
    where_columns: Type.Optional(IdentifierList),
    field_aliases: Type.Optional(FieldAliases),
    query: Type.Optional(QuerySettings),
    memory_cap_mb: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.Null()], { default: null }),
    ),
    sync: Type.Optional(SyncSettings),
    cdc_reconnect_policy: Type.Optional(Type.Enum(['resume', 'shutdown'], { default: 'resume' })),
  },
  { additionalProperties: false },
);

/** A schema config as written: every key optional. */
export type SchemaConfigInput = Static<typeof SchemaConfigSchema>;

type Filled<T> = Required<NonNullable<T>>;

/** The schema config after validation, with every default filled in. */
export type SchemaConfig = Omit<
  SchemaConfigInput,
  'query' | 'memory_cap_mb' | 'sync' | 'cdc_reconnect_policy'
> & {
  query: Filled<SchemaConfigInput['query']>;
  memory_cap_mb: number | null;
  sync: Omit<Filled<SchemaConfigInput['sync']>, 'change_column'> & {
    change_column?: string | undefined;
  };
  cdc_reconnect_policy: NonNullable<SchemaConfigInput['cdc_reconnect_policy']>;
};

/** The schema config's JSON Schema as a document shows it: without our messages. */
export function schemaConfigJsonSchema(description: string): Record<string, unknown> {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key]) => key !== 'x-error-message')
        .map(([key, value]) => [key, strip(value)]),
    );
  };
  return { ...(strip(SchemaConfigSchema) as Record<string, unknown>), description };
}
