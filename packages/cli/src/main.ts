import { CommanderError } from 'commander';
import { createProgram } from './program.ts';

/** Runs the CLI and returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    // Commander has already printed help, a version or a usage error; keep its exit code.
    if (error instanceof CommanderError) return error.exitCode;
    throw error;
  }
}
