import { resolve } from 'node:path';
import process from 'node:process';
import { ConfigError } from '@replix/runtime';
import type { Command } from 'commander';
import { EXIT_USAGE } from './exit-codes.ts';

interface RouterCommandOptions {
  readonly dir: string;
  readonly takeOver?: boolean;
  readonly logLevel: string;
}

/**
 * `replix router --dir <dataDir>/router`: the process driver's endpoint router, a process of its
 * own that serves every database's stable endpoint from the routes file the control plane
 * writes, so queries outlive the control plane's process (docs/control-plane/instances.md). The
 * process driver starts and adopts it; an operator does not run it by hand.
 */
export function addRouterCommand(program: Command): void {
  program
    .command('router')
    .description(
      "serve the databases' stable endpoints from <dir>/routes.json: what the process driver runs",
    )
    .requiredOption('--dir <folder>', 'the router folder, <data dir>/router')
    .option('--take-over', 'listen beside the router this one replaces (an upgrade)')
    .option('--log-level <level>', 'log level', 'info')
    .action(async (options: RouterCommandOptions) => {
      // Only the router is loaded: never the control plane's store or API.
      const { runRouterProgram } = await import('@replix/control-plane/router');
      try {
        await runRouterProgram({
          dir: resolve(options.dir),
          takeOver: options.takeOver === true,
          logLevel: options.logLevel,
        });
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`replix router: ${error.message}\n`);
        process.exit(EXIT_USAGE);
      }
      process.exit(0);
    });
}
