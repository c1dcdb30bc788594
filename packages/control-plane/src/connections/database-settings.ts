import { parseSchemaConfig, type SchemaConfig, SchemaConfigError } from '@replix/engine';
import { ApiError } from '../errors.ts';

export const SYNC_MODES = ['cdc', 'poll'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;

/**
 * Validates a schema config with the engine's own parser; a bad one is 400
 * `invalid_schema_config`, the message naming every key path at fault.
 */
export function validSchemaConfig(input: unknown): SchemaConfig {
  try {
    return parseSchemaConfig(input);
  } catch (error) {
    if (!(error instanceof SchemaConfigError)) throw error;
    const problems = error.issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`);
    throw new ApiError(
      'invalid_schema_config',
      `The schema config is invalid: ${problems.join('; ')}.`,
    );
  }
}
