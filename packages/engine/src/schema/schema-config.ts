import { z } from 'zod';
import { SchemaConfigError } from '../errors.ts';

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

const identifierList = z.array(z.string().min(1)).min(1);

const tableEntry = z
  .object({
    name: z.string().min(1),
    where: z.string().min(1).optional(),
    where_columns: identifierList.optional(),
    /** Views only: seconds between re-reads (a view has no change stream). */
    refresh_interval: z
      .number()
      .min(VIEW_REFRESH_MIN_S, `a view is re-read at most once a second`)
      .optional(),
    columns: z
      .object({ include: identifierList.optional(), exclude: identifierList.optional() })
      .strict()
      .refine((c) => !(c.include && c.exclude), 'give either include or exclude, not both')
      .optional(),
  })
  .strict();

const schemaConfigShape = z
  .object({
    tables: z.array(tableEntry).min(1).optional(),
    where: z.string().min(1).optional(),
    where_columns: identifierList.optional(),
    field_aliases: z
      .record(
        z.string().regex(/^[^.]+(\.[^.]+)?$/, 'keys are "table" or "table.field"'),
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an alias must be a plain identifier'),
      )
      .optional(),
    query: z
      .object({
        nested_default_limit: z.number().int().min(0).default(1000),
        max_body_bytes: z
          .number()
          .int()
          .min(256)
          .max(1024 * 1024)
          .default(QUERY_DEFAULTS.max_body_bytes),
        timeout_ms: z.number().int().min(10).max(60_000).default(QUERY_DEFAULTS.timeout_ms),
        max_rows: z.number().int().min(1).max(10_000_000).default(QUERY_DEFAULTS.max_rows),
        max_response_bytes: z
          .number()
          .int()
          .min(1024)
          .max(1024 * 1024 * 1024)
          .default(QUERY_DEFAULTS.max_response_bytes),
      })
      .strict()
      .default(QUERY_DEFAULTS),
    memory_cap_mb: z.number().positive().nullable().default(null),
    sync: z
      .object({
        mode: z.enum(['cdc', 'poll']).default('cdc'),
        interval: z.number().positive().default(1),
        safety_net: z.number().min(0).default(0),
        change_column: z.string().min(1).optional(),
      })
      .strict()
      .default({ mode: 'cdc', interval: 1, safety_net: 0 }),
    cdc_reconnect_policy: z.enum(['resume', 'shutdown']).default('resume'),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.where && !config.where_columns) {
      ctx.addIssue({
        code: 'custom',
        path: ['where_columns'],
        message: 'a root "where" needs "where_columns": it applies to the tables that have them',
      });
    }
    const names = new Set<string>();
    config.tables?.forEach((table, index) => {
      if (names.has(table.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['tables', index, 'name'],
          message: `table "${table.name}" is listed twice`,
        });
      }
      names.add(table.name);
    });
  });

/** The schema config after validation, with every default filled in. */
export type SchemaConfig = z.output<typeof schemaConfigShape>;

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

/**
 * Validates a schema config (parsed JSON) and fills in defaults. Throws `SchemaConfigError`
 * listing every problem with its key path.
 */
export function parseSchemaConfig(input: unknown): SchemaConfig {
  const result = schemaConfigShape.safeParse(input ?? {});
  if (result.success) return result.data;
  throw new SchemaConfigError(
    result.error.issues.flatMap((issue) => {
      // Name an unknown key by its own path, and a bad record key by the rule it breaks.
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => ({
          path: formatPath([...issue.path, key]),
          message: 'unknown key',
        }));
      }
      const message =
        issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
      return [{ path: formatPath(issue.path), message }];
    }),
  );
}

/** The config used when none is given: every table, every default. */
export function defaultSchemaConfig(): SchemaConfig {
  return parseSchemaConfig({});
}
