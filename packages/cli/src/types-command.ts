import { writeFile } from 'node:fs/promises';
import process from 'node:process';
import { type NumberMode, ReplixClient, ReplixError } from '@replix/sdk';
import { generateTypes } from '@replix/sdk/typegen';
import { type Command, CommanderError, Option } from 'commander';
import { cliEnvironment } from './cli-environment.ts';
import { EXIT_FAILED, EXIT_USAGE } from './exit-codes.ts';

interface TypesOptions {
  key?: string;
  out?: string;
  numbers: NumberMode;
}

function fail(message: string): never {
  process.stderr.write(`replix types: ${message}\n`);
  throw new CommanderError(EXIT_FAILED, 'replix.typesFailed', message);
}

async function runTypes(instanceUrl: string, options: TypesOptions, command: Command) {
  let client: ReplixClient;
  // /openapi.json needs no key; one is sent when given, for endpoints in front that want it.
  const key = options.key || cliEnvironment().REPLIX_API_KEY || undefined;
  try {
    client = new ReplixClient({ url: instanceUrl, key });
  } catch {
    command.error(
      'replix types: <instance-url> must be an http:// or https:// URL without credentials, like http://127.0.0.1:4100',
      { exitCode: EXIT_USAGE, code: 'replix.usage' },
    );
  }
  let text: string;
  try {
    const source = new URL('openapi.json', `${instanceUrl.replace(/\/*$/, '')}/`);
    text = generateTypes(await client.openapi(), {
      source: `${source.origin}${source.pathname}`,
      numbers: options.numbers,
    });
  } catch (error) {
    if (error instanceof ReplixError) fail(error.message);
    if (error instanceof TypeError)
      fail(`the instance's /openapi.json has no tables: ${error.message}`);
    throw error;
  }
  if (!options.out) {
    process.stdout.write(text);
    return;
  }
  try {
    await writeFile(options.out, text);
  } catch (error) {
    fail(`cannot write ${options.out}: ${(error as Error).message}`);
  }
  process.stderr.write(`replix types: wrote ${options.out}\n`);
}

/** `replix types <instance-url>`: TypeScript types for every table, from its /openapi.json. */
export function addTypesCommand(program: Command): void {
  const command = program
    .command('types')
    .description('write TypeScript types for every table of an instance, from its /openapi.json')
    .argument('<instance-url>', 'the instance, e.g. http://127.0.0.1:4100')
    .option('--key <rxk_…>', 'API key, when the URL needs one (default: REPLIX_API_KEY)')
    .option('--out <file>', 'write the types to this file instead of stdout')
    .addOption(
      new Option(
        '--numbers <mode>',
        "type numbers as @replix/sdk's `numbers` option gives them: exact (BIGINT bigint, DECIMAL string) or plain (number)",
      )
        .choices(['exact', 'plain'])
        .default('exact'),
    )
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  npx replix types <instance-url> --key rxk_… --out src/replix-types.ts',
        '',
        'One interface per table (columns, and relations as optional properties), and',
        "`Tables`, each table's name to its row type, for @replix/sdk's query<Row>().",
        'BIGINT columns are bigint and DECIMAL columns string, as the client gives them; pass',
        "--numbers plain for a client made with `numbers: 'plain'`.",
      ].join('\n'),
    )
    .showHelpAfterError("(run 'replix types --help' for usage and an example)")
    .action(async (instanceUrl: string, options: TypesOptions) => {
      await runTypes(instanceUrl, options, command);
    });
}
