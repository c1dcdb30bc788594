/**
 * The engine's error catalogue: every error a query can produce, with its stable code and
 * HTTP status (docs/instance-api.md, "Errors"). The instance maps these to `{error:{code,message}}`
 * in one place; messages are written for the query's author and never carry internals.
 */
export const ENGINE_ERRORS = {
  parse_error: { status: 400, doc: 'The query text is not valid syntax.' },
  executor_error: {
    status: 400,
    doc: 'The query is well-formed but invalid for the schema: unknown field in a filter or ORDER BY (or in the selection without @lenient), wrong value type, AFTER on a table without a single-column integer or text primary key, AFTER with aggregates or ORDER BY, a malformed cursor.',
  },
  unknown_table: { status: 404, doc: 'The queried table is not in the schema.' },
  query_too_complex: {
    status: 400,
    doc: 'The query is over a structural limit: tokens, nesting of selections or parentheses, ORDER BY keys, filter conditions, IN-list values, relations in one path, or selection items (docs/limits.md).',
  },
  query_timeout: {
    status: 400,
    doc: 'The query ran past its time budget (`query.timeout_ms`) and was stopped; narrow the filter, lower LIMIT or page with AFTER.',
  },
  too_many_rows: {
    status: 400,
    doc: 'The answer would hold more rows, across all nesting levels, than `query.max_rows`; lower LIMIT, nest fewer levels or page with AFTER.',
  },
  response_too_large: {
    status: 400,
    doc: 'The answer would be larger than `query.max_response_bytes`; select fewer fields, lower LIMIT or page with AFTER.',
  },
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
