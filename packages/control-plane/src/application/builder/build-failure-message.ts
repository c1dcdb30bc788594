import { SchemaConfigError } from '@replix/engine';
import { ApiError } from '../../domain/errors.ts';
import { BuildError } from './run-build.ts';

/**
 * What a failed build reports (build log, build.failed): the user's own mistakes and source
 * problems in words they can act on; anything else as a generic line, so no stack, SQL, path or
 * host name reaches the API. The full error goes to the control-plane log.
 */
export function buildFailureMessage(error: unknown): { message: string; expected: boolean } {
  if (error instanceof SchemaConfigError) {
    const issues = error.issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`);
    return { message: `Invalid schema config: ${issues.join('; ')}`, expected: true };
  }
  if (error instanceof BuildError || error instanceof ApiError) {
    return { message: error.message, expected: true };
  }
  return {
    message: 'The build failed unexpectedly; the control-plane log has the details.',
    expected: false,
  };
}
