import { parseSchemaConfig, type SchemaConfig, SchemaConfigError } from '@replix/engine';
import type { PlanLimits } from '../domain/plans.ts';
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

/** Poll mode re-reads the source, so the plan sets the shortest interval allowed. */
export function assertSyncInterval(
  syncMode: string,
  syncInterval: number,
  limits: PlanLimits,
  plan: string,
): void {
  if (syncMode === 'poll' && syncInterval < limits.pollModeMinSyncInterval) {
    throw new ApiError(
      'validation_failed',
      `body.syncInterval must be at least ${limits.pollModeMinSyncInterval} seconds in poll mode on the ${plan} plan.`,
    );
  }
}
