import { Command } from 'commander';

export const VERSION = '0.1.0';

/** The `replix` command tree. Commands are added here as the packages behind them land. */
export function createProgram(): Command {
  const program = new Command('replix')
    .description('Replix: fast, cacheable read APIs over in-memory snapshots of your database')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();

  program
    .command('start')
    .description('start Replix on its embedded defaults')
    .action(() => {
      process.stdout.write(
        'replix start will run the control plane, its dashboard and a demo instance on the\n' +
          'embedded defaults. They are not built yet; see README.md for what is available.\n',
      );
    });

  return program;
}
