import { readFileSync } from 'node:fs';
import process from 'node:process';
import {
  getV1Databases,
  getV1DatabasesById,
  patchV1DatabasesById,
  postV1Databases,
  postV1DatabasesByIdResize,
  unwrap,
} from '@replix/client';
import { type Command, Option } from 'commander';
import {
  apiAction,
  apiClient,
  CommandFailure,
  printFields,
  printJson,
  printTable,
} from './api-session.ts';
import { addDatabaseShowCommand } from './database-show-command.ts';

export const INSTANCE_SIZES = ['xs', 's', 'm', 'l', 'xl'] as const;
type InstanceSize = (typeof INSTANCE_SIZES)[number];

interface CreateOptions {
  name: string;
  connection: string;
  sourceSchema: string;
  config?: string;
  size?: InstanceSize;
  replicas?: string;
  region?: 'eu-west-1' | 'us-east-1';
  syncMode?: 'cdc' | 'poll';
  syncInterval?: string;
  json: boolean;
}

interface UpdateOptions {
  sourceSchema?: string;
  config?: string;
  syncMode?: 'cdc' | 'poll';
  syncInterval?: string;
  replicas?: string;
  json: boolean;
}

/** `--replicas` as a whole number ≥ 1, or undefined when not given (the plan's limit is the API's). */
export function replicaCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1) {
    throw new CommandFailure('--replicas must be a whole number of at least 1.');
  }
  return count;
}

/** `--sync-interval` as whole seconds, or undefined when not given. */
function wholeSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isInteger(seconds)) {
    throw new CommandFailure('--sync-interval must be a whole number of seconds.');
  }
  return seconds;
}

/** A schema config file (docs/schema-config.md): a JSON object. */
function schemaConfig(path: string | undefined): Record<string, unknown> | undefined {
  if (path === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new CommandFailure(`cannot read ${path} as JSON.`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CommandFailure(`${path} must hold a JSON object (a schema config).`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * `replix databases list|get|show|create|update`: databases (a source schema served as an
 * instance).
 */
export function addDatabasesCommands(program: Command): Command {
  const databases = program
    .command('databases')
    .alias('db')
    .description(
      'databases (or db): list, get, show where it answers, create, update, and the lifecycle actions',
    );

  databases
    .command('list')
    .description('list the account’s databases')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('databases list', async (options: { json: boolean }) => {
        const rows = await unwrap(getV1Databases({ client: apiClient() }));
        if (options.json) return printJson(rows);
        printTable(
          rows,
          ['id', 'name', 'status', 'sourceSchema', 'instanceSize', 'region'],
          '(no databases)',
        );
      }),
    );

  databases
    .command('get <id>')
    .description('show one database')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('databases get', async (id: string, options: { json: boolean }) => {
        const database = await unwrap(getV1DatabasesById({ client: apiClient(), path: { id } }));
        if (options.json) return printJson(database);
        printFields(database);
      }),
    );

  addDatabaseShowCommand(databases);

  databases
    .command('create')
    .description('create a database (a draft; `replix db provision <id>` builds and starts it)')
    .requiredOption('--name <name>', 'a name for the database')
    .requiredOption('--connection <id>', 'the connection to the source server')
    .requiredOption('--source-schema <schema>', 'the source schema (database) to serve')
    .option('--config <file>', 'a schema config JSON file (docs/schema-config.md)')
    .addOption(new Option('--size <size>', 'instance size (default xs)').choices(INSTANCE_SIZES))
    .option(
      '--replicas <n>',
      'read replicas behind the endpoint (default 1; the plan sets the most)',
    )
    .addOption(new Option('--region <region>', 'region').choices(['eu-west-1', 'us-east-1']))
    .addOption(new Option('--sync-mode <mode>', 'sync mode').choices(['cdc', 'poll']))
    .option('--sync-interval <seconds>', 'seconds between sync ticks')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('databases create', async (options: CreateOptions) => {
        const syncInterval = wholeSeconds(options.syncInterval);
        const created = await unwrap(
          postV1Databases({
            client: apiClient(),
            body: {
              name: options.name,
              connectionId: options.connection,
              sourceSchema: options.sourceSchema,
              schemaConfig: schemaConfig(options.config),
              instanceSize: options.size,
              replicas: replicaCount(options.replicas),
              region: options.region,
              syncMode: options.syncMode,
              syncInterval,
            },
          }),
        );
        if (options.json) return printJson(created);
        process.stdout.write(
          `Created database ${created.id} (${created.name}), ${created.status}.\n`,
        );
      }),
    );

  databases
    .command('update <id>')
    .description(
      'change settings; they stay pending until `replix db reconfigure` (or rebuild, for the schema), except --replicas: a resize, deployed at once with zero downtime',
    )
    .option('--source-schema <schema>', 'the source schema (database) to serve')
    .option('--config <file>', 'a schema config JSON file (docs/schema-config.md)')
    .addOption(new Option('--sync-mode <mode>', 'sync mode').choices(['cdc', 'poll']))
    .option(
      '--sync-interval <seconds>',
      "seconds between sync ticks (poll without one: the plan's minimum)",
    )
    .option(
      '--replicas <n>',
      'read replicas behind the endpoint: queues a resize (a redeploy with zero downtime)',
    )
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('databases update', async (id: string, options: UpdateOptions) => {
        const body = {
          sourceSchema: options.sourceSchema,
          schemaConfig: schemaConfig(options.config),
          syncMode: options.syncMode,
          syncInterval: wholeSeconds(options.syncInterval),
        };
        const replicas = replicaCount(options.replicas);
        const settings = Object.values(body).some((value) => value !== undefined);
        if (!settings && replicas === undefined) {
          throw new CommandFailure(
            'name a setting to change: --source-schema, --config, --sync-mode, --sync-interval or --replicas.',
          );
        }
        const client = apiClient();
        const updated = settings
          ? await unwrap(patchV1DatabasesById({ client, path: { id }, body }))
          : undefined;
        // The replica count is no pending setting: the API changes it by the resize action.
        const resized =
          replicas === undefined
            ? undefined
            : await unwrap(postV1DatabasesByIdResize({ client, path: { id }, body: { replicas } }));
        const database = updated ?? (await unwrap(getV1DatabasesById({ client, path: { id } })));
        if (options.json) return printJson(database);
        printFields(database);
        if (resized) {
          process.stdout.write(
            `\nResizing to ${replicas} replica${replicas === 1 ? '' : 's'}: ${resized.status} (replix databases show ${id} follows it).\n`,
          );
        }
      }),
    );
  return databases;
}
