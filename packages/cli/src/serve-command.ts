import { SchemaConfigError } from '@replix/engine';
import { InstanceConfigError, resolveInstanceConfig, startInstance } from '@replix/instance';
import type { Command } from 'commander';

export interface ServeOptions {
  source?: string;
  config?: string;
  port?: string;
  host?: string;
  logLevel?: string;
}

/** Closes `close` on Ctrl-C or SIGTERM, then exits 0. */
export function exitOnSignals(close: () => Promise<void>): void {
  const stop = () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** A message for the terminal: config problems as they are, anything else without internals. */
export function describeStartError(error: unknown): string {
  if (error instanceof InstanceConfigError || error instanceof SchemaConfigError)
    return error.message;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${message} (${code})` : message;
}

export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve one database: load a snapshot of the source and answer queries over HTTP')
    .requiredOption(
      '--source <url>',
      'mysql://user:pass@host:port/db or postgres://user:pass@host:port/db',
    )
    .option('--config <file>', 'schema config file (JSON); see docs/schema-config.md')
    .option('--port <n>', 'port to listen on; 0 picks a free one', '0')
    .option('--host <addr>', 'address to listen on', '127.0.0.1')
    .option('--log-level <level>', 'log level (trace, debug, info, warn, error)')
    .addHelpText(
      'after',
      '\nWhen ready it prints one JSON line on stdout:\n  {"event":"ready","url":"http://127.0.0.1:PORT","apiKey":"rxk_…"}\nLogs are JSON lines on stderr.',
    )
    .action(async (options: ServeOptions) => {
      let instance: Awaited<ReturnType<typeof startInstance>>;
      try {
        const config = resolveInstanceConfig(options);
        instance = await startInstance(config, undefined, {
          onFatal(reason) {
            process.stderr.write(`replix serve: stopping: ${reason}\n`);
            (instance ? instance.close() : Promise.resolve()).finally(() => process.exit(1));
          },
        });
      } catch (error) {
        process.stderr.write(`replix serve: ${describeStartError(error)}\n`);
        process.exit(1);
      }
      exitOnSignals(() => instance.close());
      const ready: Record<string, string> = { event: 'ready', url: instance.url };
      if (instance.apiKey) ready.apiKey = instance.apiKey;
      process.stdout.write(`${JSON.stringify(ready)}\n`);
    });
}
