import { parseSchemaConfig } from '@replix/engine';
import {
  type InstanceConfig,
  newKeyId,
  newKeySecret,
  sourceBuildHash,
  startInstance,
} from '@replix/instance';
import type { Command } from 'commander';
import { DEMO_QUERIES } from './demo/demo-dataset.ts';
import { startDemoSource } from './demo/demo-source.ts';
import { describeStartError, exitOnSignals } from './serve-command.ts';

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** The demo banner: where the instance is, its key, and queries to paste. */
export function demoBanner(url: string, apiKey: string): string {
  const examples = DEMO_QUERIES.map(
    (query) =>
      `  curl -s ${url}/query -H ${shellQuote(`Authorization: Bearer ${apiKey}`)} --data-binary ${shellQuote(query)}`,
  );
  return [
    '',
    'Replix is serving the demo shop (customers, products, orders, order_items).',
    '',
    `  instance  ${url}`,
    `  API key   ${apiKey}`,
    `  schema    ${url}/openapi.json`,
    '',
    'Try:',
    ...examples,
    '',
    'Ctrl-C stops it.',
    '',
  ].join('\n');
}

export function addStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'start Replix on its embedded defaults: a demo instance over an embedded PostgreSQL',
    )
    .option('--port <n>', 'port for the instance; 0 picks a free one', '0')
    .action(async (options: { port: string }) => {
      process.stderr.write(
        'Starting the embedded demo database (PGlite) and loading the demo shop…\n',
      );
      let close: () => Promise<void>;
      let banner: string;
      try {
        const source = await startDemoSource();
        const keySecret = newKeySecret();
        const keyId = newKeyId();
        const config: InstanceConfig = {
          sourceUrl: source.url,
          // PGlite has no logical replication: the demo re-reads its source instead.
          schemaConfig: parseSchemaConfig({ sync: { mode: 'poll', interval: 30 } }),
          host: '127.0.0.1',
          port: Number(options.port),
          keySecret,
          keyIds: [keyId],
          generatedKey: true,
          buildHash: sourceBuildHash(),
          logLevel: process.env.REPLIX_LOG_LEVEL ?? 'warn',
        };
        const instance = await startInstance(config);
        close = async () => {
          await instance.close();
          await source.close();
        };
        banner = demoBanner(instance.url, instance.apiKey ?? '');
      } catch (error) {
        process.stderr.write(`replix start: ${describeStartError(error)}\n`);
        process.exit(1);
      }
      exitOnSignals(close);
      process.stdout.write(banner);
    });
}
