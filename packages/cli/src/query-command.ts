import process from 'node:process';
import { type QueryResult, ReplixClient, ReplixError } from '@replix/sdk';
import { type Command, CommanderError } from 'commander';
import { cliEnvironment } from './cli-environment.ts';
import { EXIT_FAILED, EXIT_USAGE } from './exit-codes.ts';
import { formatRows, formatSummary, type QueryMeta } from './format-rows.ts';
import { parseJsonLossless, prettyJson } from './json-text.ts';

interface QueryOptions {
  key?: string;
  json?: boolean;
  get?: boolean;
}

/** The `/query` URL under an instance URL; the instance may sit under a path prefix. */
export function queryUrl(instanceUrl: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(instanceUrl);
  } catch {
    return undefined;
  }
  // fetch refuses credentials in URLs; the key goes in the Authorization header instead.
  if (!/^https?:$/.test(url.protocol) || url.username || url.password) return undefined;
  const base = url.pathname.replace(/\/+$/, '');
  url.pathname = base.endsWith('/query') ? base : `${base}/query`;
  url.search = '';
  url.hash = '';
  return url;
}

/** Stops with exit code 1 after the message (main() turns the CommanderError into the code). */
function fail(message: string): never {
  process.stderr.write(`replix query: ${message}\n`);
  throw new CommanderError(EXIT_FAILED, 'replix.queryFailed', message);
}

/** The SDK's own codes say what happened in their message; an instance's is shown with it. */
const CLIENT_CODES = new Set(['connection_failed', 'invalid_response', 'starting']);

async function runQuery(
  instanceUrl: string,
  query: string,
  options: QueryOptions,
  command: Command,
) {
  const url = queryUrl(instanceUrl);
  if (!url) {
    command.error(
      'replix query: <instance-url> must be an http:// or https:// URL without credentials, like http://127.0.0.1:4100',
      { exitCode: EXIT_USAGE, code: 'replix.usage' },
    );
  }
  const key = options.key || cliEnvironment().REPLIX_API_KEY;
  if (!key) {
    command.error(
      'replix query: no API key: pass --key rxk_… or set the REPLIX_API_KEY environment variable.',
      { exitCode: EXIT_USAGE, code: 'replix.usage' },
    );
  }
  // The same client apps use (@replix/sdk), reading numbers without losing digits; one query
  // per process has nothing to reuse an ETag for.
  const client = new ReplixClient({
    url: new URL('.', url),
    key,
    cache: false,
    parseJson: parseJsonLossless,
  });
  let result: QueryResult<Record<string, unknown>>;
  try {
    result = await client.query(query, { method: options.get ? 'GET' : 'POST' });
  } catch (error) {
    if (!(error instanceof ReplixError)) throw error;
    fail(CLIENT_CODES.has(error.code) ? error.message : `${error.code}: ${error.message}`);
  }
  if (options.json) {
    process.stdout.write(`${prettyJson(result.body)}\n`);
    return;
  }
  const meta = result.meta as QueryMeta;
  process.stdout.write(`${formatRows(result.data)}\n\n${formatSummary(meta)}\n`);
}

/** `replix query <instance-url> '<query>'`: runs one query against an instance and prints it. */
export function addQueryCommand(program: Command): void {
  const command = program
    .command('query')
    .description("run a query against an instance's /query endpoint and print the rows")
    .argument('<instance-url>', 'the instance, e.g. http://127.0.0.1:4100')
    .argument('<query>', "the query, e.g. 'customers { id name } LIMIT 5'")
    .option('--key <rxk_…>', 'API key (default: the REPLIX_API_KEY environment variable)')
    .option('--json', 'print the whole response JSON as received, indented')
    .option('--get', 'use GET /query?q=… (cacheable) instead of POST /query')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  the instance URL and API key are the ones `replix start` prints (not the control plane):',
        "  REPLIX_API_KEY=rxk_… npx replix query <instance-url> 'customers { id name orders { id placed_on } } LIMIT 3'",
        '',
        'Prints the rows as a table (nested objects and arrays as compact JSON) and a summary line:',
        '  N rows of M matched · X ms · snapshot swap S, age A ms[ · next cursor: C]',
        'The query language is described in docs/instance-api.md.',
        '',
        'Exit codes: 0 success; 1 the query failed (the instance error is printed as',
        "'replix query: <code>: <message>') or the instance could not be reached; 2 usage errors",
        '(a bad URL, no API key, a missing argument or an unknown option).',
      ].join('\n'),
    )
    .showHelpAfterError("(run 'replix query --help' for usage and an example)")
    .action(async (instanceUrl: string, query: string, options: QueryOptions) => {
      await runQuery(instanceUrl, query, options, command);
    });
}
