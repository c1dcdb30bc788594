import { Command } from 'commander';
import { addRoleCommands } from './control-plane-commands.ts';
import { addQueryCommand } from './query-command.ts';
import { addServeCommand } from './serve-command.ts';
import { addStartCommand } from './start-command.ts';
import { addTokenCommand } from './token-command.ts';

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
  addTokenCommand(program);
  addQueryCommand(program);
  addRoleCommands(program);
  return program;
}
