import process from 'node:process';
import { ConfigError } from '@replix/runtime';
import { type Command, CommanderError } from 'commander';
import { EXIT_FAILED, EXIT_USAGE } from './exit-codes.ts';
import { baseProgram } from './program-base.ts';

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

/**
 * The commands a long-running process is started with, an instance's `replix serve` and the
 * endpoint router, each with the module that adds it. Such a process loads that module alone,
 * not the whole command tree (the API client, the SDK, sign-in: some 25 MB resident that an
 * instance would hold for its whole life).
 */
const PROCESS_COMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  serve: async () => (await import('./serve-command.ts')).addServeCommand,
  router: async () => (await import('./router-command.ts')).addRouterCommand,
};

/** The program `argv` runs: a process command alone, or the whole command tree. */
async function programFor(argv: readonly string[]): Promise<Command> {
  const name = argv[2] ?? '';
  // Own keys only: `replix constructor` is an unknown command, not Object's.
  const processCommand = Object.hasOwn(PROCESS_COMMANDS, name) ? PROCESS_COMMANDS[name] : undefined;
  if (!processCommand) return (await import('./program.ts')).createProgram();
  const program = baseProgram();
  (await processCommand())(program);
  return program;
}

/** Runs the CLI and returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  endQuietlyWhenStdoutCloses();
  try {
    await (await programFor(argv)).parseAsync(argv);
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
