import { Command } from 'commander';
import { addServeCommand } from './serve-command.ts';
import { addStartCommand } from './start-command.ts';

export const VERSION = '0.1.0';

/** The `replix` command tree. Commands are added here as the packages behind them land. */
export function createProgram(): Command {
  const program = new Command('replix')
    .description('Replix: fast, cacheable read APIs over in-memory snapshots of your database')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();

  addStartCommand(program);
  addServeCommand(program);
  return program;
}
