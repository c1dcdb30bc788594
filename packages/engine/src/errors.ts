/**
 * The engine's error catalogue: every error a query can produce, with its stable code and
 * HTTP status (spec §7, instance table). The instance maps these to `{error:{code,message}}`
 * in one place; messages are written for the query's author and never carry internals.
 */
export const ENGINE_ERRORS = {
  parse_error: { status: 400, doc: 'The query text is not valid syntax.' },
  executor_error: {
    status: 400,
    doc: 'The query is well-formed but invalid for the schema: unknown field in a filter or ORDER BY (or in the selection without @lenient), wrong value type, AFTER on a table without a single-column integer or text primary key, AFTER with aggregates or ORDER BY, a malformed cursor.',
  },
  unknown_table: { status: 404, doc: 'The queried table is not in the schema.' },
} as const;

export type EngineErrorCode = keyof typeof ENGINE_ERRORS;

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  readonly status: number;

  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
    this.status = ENGINE_ERRORS[code].status;
  }
}

/** A schema config that fails validation; `path` names the offending key (`tables[2].name`). */
export class SchemaConfigError extends Error {
  readonly issues: readonly { path: string; message: string }[];

  constructor(issues: readonly { path: string; message: string }[]) {
    super(
      `Invalid schema config:\n${issues.map((issue) => `  - ${issue.path || '(root)'}: ${issue.message}`).join('\n')}`,
    );
    this.name = 'SchemaConfigError';
    this.issues = issues;
  }
}
