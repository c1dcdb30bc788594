import { ReplixApiError } from '@replix/client';

/**
 * The `replix db …` line for the action a refusal names: the API's reasons end with the
 * dashboard's words, "…: use Reconfigure instead.", which become `replix db reconfigure <id>`.
 */
export function insteadCommand(reason: string, id: string): string | undefined {
  const label = reason.match(/: use (.+) instead\.$/)?.[1];
  return label ? `replix db ${label.toLowerCase().replaceAll(' ', '-')} ${id}` : undefined;
}

/** Runs an action; a refusal that names another action also gets the command for it. */
export async function withInsteadCommand<T>(id: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ReplixApiError && error.error === 'action_not_allowed') {
      const command = insteadCommand(error.message, id);
      if (command) {
        throw new ReplixApiError(error.error, `${error.message} Run: ${command}`, error.status);
      }
    }
    throw error;
  }
}
