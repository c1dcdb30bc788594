import { parseSchemaConfig, type SchemaConfig, SchemaConfigError } from '@replix/engine';
import {
  type SourceBackend,
  schemaConfigWhereProblems,
  type WhereConfigIssue,
} from '@replix/sources';
import type { Selectable } from 'kysely';
import type { DatabaseTable, DeployedInstanceConfig } from '../adapters/store/schema.ts';
import { ApiError } from './errors.ts';
import { INSTANCE_SIZE_NAMES, INSTANCE_SIZES, type InstanceSize } from './plans.ts';

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
export function validSchemaConfig(input: unknown, backend: SourceBackend): SchemaConfig {
  let config: SchemaConfig;
  try {
    config = parseSchemaConfig(input);
  } catch (error) {
    if (!(error instanceof SchemaConfigError)) throw error;
    throw invalidConfig(error.issues);
  }
  const issues = schemaConfigWhereProblems(backend, config);
  if (issues.length > 0) throw invalidConfig(issues);
  return config;
}

/** The size an instance of a stored size name runs at: an unknown name runs at xs. */
function runnableSize(name: string): InstanceSize {
  return (INSTANCE_SIZE_NAMES as readonly string[]).includes(name) ? (name as InstanceSize) : 'xs';
}

/**
 * The runtime settings an instance of the database gets now (recorded as deployed_config). An
 * unknown stored size runs, and is recorded, as xs.
 */
export function deployedConfigOf(database: Selectable<DatabaseTable>): DeployedInstanceConfig {
  const size = runnableSize(database.instance_size);
  return {
    instanceSize: size,
    taskCpu: INSTANCE_SIZES[size].taskCpu,
    taskMemoryMb: INSTANCE_SIZES[size].taskMemoryMb,
    syncMode: database.sync_mode,
    syncInterval: database.sync_interval,
    logLevel: database.log_level,
    safetyNet: database.safety_net,
    replicas: database.replicas,
  };
}
