import { createServer } from 'node:net';
import process from 'node:process';
import type { startControlPlane } from '@replix/control-plane';
import { ConfigError } from '@replix/runtime';
import type { Command } from 'commander';
import { cliEnvironment } from './cli-environment.ts';
import { controlPlaneConfigOrExit } from './control-plane-commands.ts';
import { DEMO_QUERIES } from './demo/demo-dataset.ts';
import { DEMO_EMAIL, type DemoInstance, setUpDemo } from './demo/demo-setup.ts';
import type { startDemoSource } from './demo/demo-source.ts';
import { loginLinkUrl } from './login-link-command.ts';
import { exitOnSignals } from './serve-command.ts';

/** The demo source's port: fixed (REPLIX_DEMO_PORT), so the walkthrough's commands work as written. */
function demoPort(): number {
  try {
    return cliEnvironment().REPLIX_DEMO_PORT;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`replix start: ${error.message}\n`);
    process.exit(1);
  }
}

/**
 * A port another process holds, in words that say which port, what wanted it and how to pick
 * another (a second `replix start` meets this); any other error as it is.
 */
export function portInUse(error: unknown, port: number, what: string, setting: string): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return error;
  return new Error(
    `port ${port}, wanted by ${what}, is in use (is Replix already running?). ` +
      `Stop the other process, or choose another port with ${setting}.`,
  );
}

/** Listens on `port` for a moment and lets go: whether another process holds it, found in ms. */
function portFree(host: string, port: number): Promise<unknown> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', resolve);
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
}

/**
 * The ports `replix start` needs, checked before it loads and starts anything (a second
 * `npm start` is told at once, not after the seconds the control plane takes to start). The
 * starts themselves still say so if another process takes a port in between.
 */
async function checkPortsFree(api: { host: string; port: number }, sourcePort: number) {
  const wanted = [
    { host: '127.0.0.1', port: sourcePort, what: 'the demo source', setting: 'REPLIX_DEMO_PORT' },
    { ...api, what: 'the API', setting: '--port or REPLIX_API_PORT' },
  ];
  for (const { host, port, what, setting } of wanted) {
    if (port === 0) continue;
    const error = await portFree(host, port);
    if (error) throw portInUse(error, port, what, setting);
  }
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** What `replix start` prints once everything listens: where things are and what to try. */
export function startBanner(options: {
  readonly apiUrl: string;
  readonly dataDir: string;
  readonly source: { host: string; port: number };
  readonly demo: DemoInstance | undefined;
  /** A one-time dashboard sign-in link for the demo account. */
  readonly loginLink: string | undefined;
}): string {
  const { apiUrl, dataDir, source, demo, loginLink } = options;
  const lines = [
    '',
    'Replix is running on its embedded defaults.',
    '',
    `  dashboard      ${apiUrl}/`,
  ];
  if (loginLink) {
    lines.push(
      `  sign in        ${loginLink}`,
      // Another link for the same account: an account of another email cannot see the demo.
      `                 (one-time link for ${DEMO_EMAIL}, valid 15 minutes; another: npx replix login-link --email ${DEMO_EMAIL})`,
    );
  }
  lines.push(
    `  control plane  ${apiUrl}/v1   (OpenAPI: ${apiUrl}/v1/openapi.json)`,
    `  data folder    ${dataDir}`,
    `  demo source    PostgreSQL at ${source.host}:${source.port}, user postgres, any password, database postgres`,
    '                 (a demo shop: customers, products, orders, order_items)',
  );
  if (demo) {
    lines.push(
      `  demo instance  ${demo.instanceUrl}   (account ${DEMO_EMAIL}, database "demo")`,
      `  API key        ${demo.apiKey}`,
      '',
      'Query the demo instance:',
      ...DEMO_QUERIES.map(
        (query) =>
          `  curl -s ${demo.instanceUrl}/query -H ${shellQuote(`Authorization: Bearer ${demo.apiKey}`)} --data-binary ${shellQuote(query)}`,
      ),
    );
  }
  lines.push(
    '',
    'Manage your own databases: get a token, then follow docs/walkthrough.md:',
    '  export TOKEN=$(npx replix token --email you@example.com)',
    `  curl -s ${apiUrl}/v1/connections -H "Authorization: Bearer $TOKEN"`,
    '',
    'Ctrl-C stops it.',
    '',
  );
  return lines.join('\n');
}

export function addStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'start Replix on its embedded defaults: the control plane (API, reconciler, builder, health monitor) on an embedded store, and a demo source',
    )
    .option('--port <n>', 'control-plane API port (default REPLIX_API_PORT or 4000)')
    .action(async (options: { port?: string }) => {
      // The terminal is for the banner and progress: request logs only at REPLIX_LOG_LEVEL=info.
      const config = controlPlaneConfigOrExit('start', {
        REPLIX_LOG_LEVEL: process.env.REPLIX_LOG_LEVEL || 'warn',
        REPLIX_API_PORT: options.port,
        // A local install has no plan floor on poll intervals: a developer polls as often as
        // their own database allows (docs/control-plane/README.md, Configuration).
        REPLIX_MIN_POLL_INTERVAL: process.env.REPLIX_MIN_POLL_INTERVAL || '1',
      });
      try {
        await checkPortsFree(config, demoPort());
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`replix start: ${message}\n`);
        process.exit(1);
      }
      process.stderr.write('Starting the control plane and the demo source (PGlite)…\n');
      // Loaded here, not at the top: every other command starts without them.
      const [{ startControlPlane }, { startDemoSource }, { terminalLogger }] = await Promise.all([
        import('@replix/control-plane'),
        import('./demo/demo-source.ts'),
        import('./terminal-log.ts'),
      ]);
      let source: Awaited<ReturnType<typeof startDemoSource>>;
      let running: Awaited<ReturnType<typeof startControlPlane>>;
      try {
        const sourcePort = demoPort();
        source = await startDemoSource(config.dataDir, sourcePort).catch((error) => {
          throw portInUse(error, sourcePort, 'the demo source', 'REPLIX_DEMO_PORT');
        });
        const log = terminalLogger(config.logLevel);
        running = await startControlPlane(config, { log }).catch(async (error) => {
          await source.close();
          throw portInUse(error, config.port, 'the API', '--port or REPLIX_API_PORT');
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        process.stderr.write(`replix start: ${message}\n`);
        process.exit(1);
      }
      // Ctrl-C works from here on, also while the demo is being built.
      exitOnSignals(async () => {
        await running.close();
        await source.close();
      });
      const apiUrl = running.url ?? '';
      const sourceUrl = new URL(source.url);
      let demo: DemoInstance | undefined;
      const issuer = running.context.issuer;
      if (issuer) {
        try {
          demo = await setUpDemo({
            apiUrl,
            issuer,
            dataDir: config.dataDir,
            sourcePort: Number(sourceUrl.port),
            progress: (message) => process.stderr.write(`${message}\n`),
          });
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          process.stderr.write(`replix start: the demo instance is not available: ${message}\n`);
        }
      }
      const loginLink = issuer
        ? loginLinkUrl(apiUrl, await issuer.signLoginLink({ email: DEMO_EMAIL }))
        : undefined;
      const banner = startBanner({
        apiUrl,
        dataDir: config.dataDir,
        source: { host: sourceUrl.hostname, port: Number(sourceUrl.port) },
        demo,
        loginLink,
      });
      process.stdout.write(banner);
    });
}
