import process from 'node:process';
import {
  deleteV1DatabasesByDbIdApiKeysByKeyId,
  getV1DatabasesByDbIdApiKeys,
  postV1DatabasesByDbIdApiKeys,
  unwrap,
} from '@replix/client';
import type { Command } from 'commander';
import { apiAction, apiClient, printJson, printTable } from './api-session.ts';

/** `replix keys list|create|delete <dbId> …`: a database's instance API keys. */
export function addKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('instance API keys of a database: list, create, delete');

  keys
    .command('list <dbId>')
    .description('list a database’s API keys (the keys themselves are shown only at creation)')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('keys list', async (dbId: string, options: { json: boolean }) => {
        const rows = await unwrap(
          getV1DatabasesByDbIdApiKeys({ client: apiClient(), path: { dbId } }),
        );
        if (options.json) return printJson(rows);
        printTable(rows, ['keyId', 'name', 'prefix', 'scope', 'createdAt'], '(no API keys)');
      }),
    );

  keys
    .command('create <dbId>')
    .description(
      'create an API key; the key is printed once, keep it. A query key (the default) may query and read the schema: fit for browsers and apps',
    )
    .requiredOption('--name <name>', 'a name for the key')
    .option(
      '--admin',
      'an admin key: may also reload, pause/resume replication, read metrics and health detail; keep it on servers, never in a browser or app',
      false,
    )
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction(
        'keys create',
        async (dbId: string, options: { name: string; admin: boolean; json: boolean }) => {
          const created = await unwrap(
            postV1DatabasesByDbIdApiKeys({
              client: apiClient(),
              path: { dbId },
              body: { name: options.name, scope: options.admin ? 'admin' : 'query' },
            }),
          );
          if (options.json) return printJson(created);
          const warning =
            created.scope === 'admin'
              ? ', an admin key: keep it on servers, never in a browser or app'
              : '';
          process.stdout.write(
            `Created API key ${created.keyId} (${created.name})${warning}. It is shown only now:\n${created.key}\n`,
          );
        },
      ),
    );

  keys
    .command('delete <dbId> <keyId>')
    .description('delete an API key; the instance stops accepting it within a second or so')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('keys delete', async (dbId: string, keyId: string, options: { json: boolean }) => {
        await unwrap(
          deleteV1DatabasesByDbIdApiKeysByKeyId({ client: apiClient(), path: { dbId, keyId } }),
        );
        if (options.json) return printJson({ deleted: true, keyId });
        process.stdout.write(`Deleted API key ${keyId}.\n`);
      }),
    );
}
