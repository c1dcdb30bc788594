import { Command } from 'commander';

export const VERSION = '0.1.0';

/** The `replix` program without its commands: its name, description, version and error rules. */
export function baseProgram(): Command {
  return new Command('replix')
    .description('Replix: fast, cacheable read APIs over in-memory snapshots of your database')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
}
