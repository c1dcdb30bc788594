import process from 'node:process';
import {
  type ControlPlaneConfig,
  type ControlPlaneOverrides,
  ROLE_NAMES,
  type RoleName,
  resolveControlPlaneConfig,
} from '@replix/control-plane/config';
import { ConfigError } from '@replix/runtime';
import type { Command } from 'commander';
import { exitOnSignals } from './serve-command.ts';

/** Decodes the control plane's configuration with a command's overrides, or exits with the reason. */
export function controlPlaneConfigOrExit(
  command: string,
  overrides: ControlPlaneOverrides = {},
): ControlPlaneConfig {
  try {
    return resolveControlPlaneConfig(process.env, overrides);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`replix ${command}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** The message of a start failure, without internals (config problems are shown as they are). */
function startFailure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `replix api|reconciler|builder|health-monitor`: one role of the control plane in its own
 * process. Run several against one PostgreSQL (`DATABASE_URL`); work is claimed with leases.
 */
export function addRoleCommands(program: Command): void {
  const descriptions: Record<RoleName, string> = {
    api: 'run the control-plane HTTP API (/v1) only',
    reconciler: 'run the reconciler only: carries out queued actions and keeps instances running',
    builder: 'run a builder only: compiles databases into instance artifacts',
    'health-monitor': 'run the health monitor only: polls instances and records their health',
  };
  for (const role of ROLE_NAMES) {
    program
      .command(role)
      .description(descriptions[role])
      .option('--port <n>', 'API port (api only; default REPLIX_API_PORT or 4000)')
      .action(async (options: { port?: string }) => {
        const config = controlPlaneConfigOrExit(role, { REPLIX_API_PORT: options.port });
        try {
          const { startControlPlane } = await import('@replix/control-plane');
          const running = await startControlPlane(config, { roles: [role] });
          exitOnSignals(() => running.close());
          process.stdout.write(
            `${JSON.stringify({
              event: 'ready',
              role,
              ...(running.url ? { url: running.url } : {}),
              ...(running.probeUrl ? { probeUrl: running.probeUrl } : {}),
            })}\n`,
          );
        } catch (error) {
          process.stderr.write(`replix ${role}: ${startFailure(error)}\n`);
          process.exit(1);
        }
      });
  }
}
