import type { Command } from 'commander';
import { addBuildJobCommand } from './build-job-command.ts';
import { addBuildsCommands } from './builds-commands.ts';
import { addConnectionsCommands } from './connections-commands.ts';
import { addRoleCommands } from './control-plane-commands.ts';
import { addDatabasesCommands } from './databases-commands.ts';
import { addDbActionCommands } from './db-action-commands.ts';
import { addKeysCommands } from './keys-commands.ts';
import { addLoginCommand } from './login-command.ts';
import { addLoginLinkCommand } from './login-link-command.ts';
import { addLogsCommands } from './logs-commands.ts';
import { baseProgram } from './program-base.ts';
import { addQueryCommand } from './query-command.ts';
import { addRouterCommand } from './router-command.ts';
import { addServeCommand } from './serve-command.ts';
import { addStartCommand } from './start-command.ts';
import { addTokenCommand } from './token-command.ts';
import { addTypesCommand } from './types-command.ts';

export { VERSION } from './program-base.ts';

/** The `replix` command tree. Commands are added here as the packages behind them land. */
export function createProgram(): Command {
  const program = baseProgram();

  addStartCommand(program);
  addServeCommand(program);
  addTokenCommand(program);
  addLoginLinkCommand(program);
  addQueryCommand(program);
  addTypesCommand(program);
  addRoleCommands(program);
  addBuildJobCommand(program);
  addRouterCommand(program);
  // Commands over the control-plane API, through the typed client (@replix/client).
  addLoginCommand(program);
  addConnectionsCommands(program);
  // `replix db …` is `replix databases …`: one command, its lifecycle actions included.
  addDbActionCommands(addDatabasesCommands(program));
  addKeysCommands(program);
  addBuildsCommands(program);
  addLogsCommands(program);
  return program;
}
