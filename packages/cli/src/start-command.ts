import { startControlPlane } from '@replix/control-plane';
import type { Command } from 'commander';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { startDemoSource } from './demo/demo-source.ts';
import { exitOnSignals } from './serve-command.ts';

/** The demo source's port: fixed, so the walkthrough's commands work as written. */
function demoPort(): number {
  const port = Number(process.env.REPLIX_DEMO_PORT ?? 15432);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('replix start: REPLIX_DEMO_PORT must be a port number.\n');
    process.exit(1);
  }
  return port;
}

/** What `replix start` prints once everything listens: where things are and what to try. */
export function startBanner(
  apiUrl: string,
  dataDir: string,
  demo: { host: string; port: number },
): string {
  return [
    '',
    'Replix is running on its embedded defaults.',
    '',
    `  control plane  ${apiUrl}/v1   (OpenAPI: ${apiUrl}/v1/openapi.json)`,
    `  data folder    ${dataDir}`,
    `  demo source    PostgreSQL at ${demo.host}:${demo.port}, user postgres, any password, database postgres`,
    '                 (a demo shop: customers, products, orders, order_items)',
    '',
    'Get a token, then follow docs/walkthrough.md:',
    '  export TOKEN=$(npx replix token --email you@example.com)',
    `  curl -s ${apiUrl}/v1/connections -H "Authorization: Bearer $TOKEN"`,
    '',
    'Ctrl-C stops it.',
    '',
  ].join('\n');
}

export function addStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'start Replix on its embedded defaults: the control plane (API, reconciler, builder, health monitor) on an embedded store, and a demo source',
    )
    .option('--port <n>', 'control-plane API port (default REPLIX_API_PORT or 4000)')
    .action(async (options: { port?: string }) => {
      const config = controlPlaneConfigOrExit(
        'start',
        options.port ? { port: Number(options.port) } : {},
      );
      process.stderr.write('Starting the control plane and the demo source (PGlite)…\n');
      let close: () => Promise<void>;
      let banner: string;
      try {
        const demo = await startDemoSource(demoPort());
        const running = await startControlPlane(config).catch(async (error) => {
          await demo.close();
          throw error;
        });
        const demoUrl = new URL(demo.url);
        close = async () => {
          await running.close();
          await demo.close();
        };
        banner = startBanner(running.url ?? '', config.dataDir, {
          host: demoUrl.hostname,
          port: Number(demoUrl.port),
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`replix start: ${message}\n`);
        process.exit(1);
      }
      exitOnSignals(close);
      process.stdout.write(banner);
    });
}
