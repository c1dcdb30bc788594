import process from 'node:process';
import { ConfigError } from '@replix/runtime';
import { CommanderError } from 'commander';
import { EXIT_FAILED, EXIT_USAGE } from './exit-codes.ts';
import { createProgram } from './program.ts';

/**
 * A reader that stops early (`replix logs --json | head -3`) closes the pipe: that is the
 * end of the output, not a failure, so the CLI ends quietly as `cat` and `grep` do.
 */
export function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

/** Runs the CLI and returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  try {
    await createProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    // Commander has already printed help, a version or a usage error. Help and version exit
    // 0; usage errors (unknown command or option, missing argument) exit 2, as POSIX tools do.
    if (error instanceof CommanderError) {
      const commandersOwn = error.code.startsWith('commander.');
      return commandersOwn && error.exitCode !== 0 ? EXIT_USAGE : error.exitCode;
    }
    // A bad variable met by a command that does not report it itself.
    if (error instanceof ConfigError) {
      process.stderr.write(`replix: ${error.message}\n`);
      return EXIT_FAILED;
    }
    throw error;
  }
}
