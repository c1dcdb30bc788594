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

function isErrorEnvelope(body: unknown): body is { error: { code: string; message: string } } {
  if (body === null || typeof body !== 'object' || !('error' in body)) return false;
  const error = body.error;
  return (
    error !== null &&
    typeof error === 'object' &&
    'code' in error &&
    typeof error.code === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

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
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  let request: RequestInit;
  if (options.get) {
    url.searchParams.set('q', query);
    request = { method: 'GET', headers };
  } else {
    request = {
      method: 'POST',
      headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' },
      body: query,
    };
  }
  // Messages name the URL without the query string: the key never is in it, the query may be long.
  const shownUrl = `${url.origin}${url.pathname}`;
  let status: number;
  let text: string;
  try {
    const response = await fetch(url, request);
    status = response.status;
    text = await response.text();
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    fail(`could not reach the instance at ${shownUrl}: ${reason}`);
  }
  let body: unknown;
  try {
    body = parseJsonLossless(text);
  } catch {
    fail(`the instance at ${shownUrl} answered HTTP ${status} with a body that is not JSON.`);
  }
  if (isErrorEnvelope(body)) fail(`${body.error.code}: ${body.error.message}`);
  if (status === 503) {
    const state =
      body !== null && typeof body === 'object' && 'status' in body ? String(body.status) : '?';
    fail(`the instance at ${shownUrl} is not serving yet (HTTP 503, status ${state}); retry soon.`);
  }
  if (status < 200 || status >= 300) fail(`the instance at ${shownUrl} answered HTTP ${status}.`);
  if (options.json) {
    process.stdout.write(`${prettyJson(text)}\n`);
    return;
  }
  const envelope = body as { data?: unknown; meta?: QueryMeta };
  const rows = Array.isArray(envelope.data) ? (envelope.data as Record<string, unknown>[]) : [];
  process.stdout.write(`${formatRows(rows)}\n\n${formatSummary(envelope.meta ?? {})}\n`);
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
