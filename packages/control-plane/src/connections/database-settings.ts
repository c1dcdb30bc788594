import { parseSchemaConfig, type SchemaConfig, SchemaConfigError } from '@replix/engine';
import {
  type SourceEngine,
  schemaConfigWhereProblems,
  type WhereConfigIssue,
} from '@replix/sources';
import { ApiError } from '../errors.ts';

export const SYNC_MODES = ['cdc', 'poll'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

function invalidConfig(issues: readonly WhereConfigIssue[]): ApiError {
  const problems = issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`);
  return new ApiError(
    'invalid_schema_config',
    `The schema config is invalid: ${problems.join('; ')}.`,
  );
}

/**
 * Validates a schema config with the engine's own parser and its `where` predicates with the
 * source dialect's SQL grammar; a bad one is 400 `invalid_schema_config`, the message naming
 * every key path at fault and, for a `where`, the position of the problem in it.
 */
export function validSchemaConfig(input: unknown, engine: SourceEngine): SchemaConfig {
  let config: SchemaConfig;
  try {
    config = parseSchemaConfig(input);
  } catch (error) {
    if (!(error instanceof SchemaConfigError)) throw error;
    throw invalidConfig(error.issues);
  }
  const issues = schemaConfigWhereProblems(engine, config);
  if (issues.length > 0) throw invalidConfig(issues);
  return config;
}
