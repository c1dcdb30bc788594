import process from 'node:process';
import { type Client, getV1Databases, getV1DatabasesByIdInstance, unwrap } from '@replix/client';
import type { Command } from 'commander';
import { apiAction, apiClient, CommandFailure, printFields, printJson } from './api-session.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A database's id from its id or its name (names are unique only by convention). */
async function databaseId(client: Client, idOrName: string): Promise<string> {
  if (UUID.test(idOrName)) return idOrName;
  const named = (await unwrap(getV1Databases({ client }))).filter((d) => d.name === idOrName);
  if (named.length === 0) throw new CommandFailure(`no database is named ${idOrName}.`);
  if (named.length > 1) {
    throw new CommandFailure(`${named.length} databases are named ${idOrName}: give the id.`);
  }
  return (named[0] as { id: string }).id;
}

/**
 * The `replix query` line for the instance: a table it serves (the first by name) or a
 * placeholder, and the key from REPLIX_API_KEY so no secret is printed.
 */
export function queryCommandLine(endpointUrl: string, tables: readonly string[]): string {
  const table = [...tables].sort()[0] ?? '<table>';
  // With npx, as every command line the docs give: pasted in a project, it runs the local CLI.
  return `npx replix query ${endpointUrl} '${table} { * } LIMIT 5' --key "$REPLIX_API_KEY"`;
}

/** `replix databases show <database>`: where it answers and how it is doing, for people. */
export function addDatabaseShowCommand(databases: Command): void {
  databases
    .command('show <database>')
    .description('endpoint, status, health, latest build and the replix query line (id or name)')
    .option('--json', 'print the same as JSON', false)
    .action(
      apiAction('databases show', async (idOrName: string, options: { json: boolean }) => {
        const client = apiClient();
        const id = await databaseId(client, idOrName);
        const view = await unwrap(getV1DatabasesByIdInstance({ client, path: { id } }));
        const { database, instance, latestBuild } = view;
        // The database's address for life; null until its first deploy.
        const endpointUrl = database.endpointUrl ?? null;
        const shown = {
          id: database.id,
          name: database.name,
          status: database.status,
          health: instance?.healthStatus ?? null,
          replicas: instance
            ? instance.replicas.map((replica) => ({
                ordinal: replica.ordinal,
                health: replica.healthStatus ?? null,
              }))
            : [],
          endpointUrl,
          latestBuild: latestBuild && {
            id: latestBuild.id,
            status: latestBuild.status,
            finishedAt: latestBuild.finishedAt,
          },
          ...(database.lastError ? { lastError: database.lastError } : {}),
          query: endpointUrl
            ? queryCommandLine(endpointUrl, Object.keys(instance?.rowCounts ?? {}))
            : null,
        };
        if (options.json) return printJson(shown);
        printFields({
          name: shown.name,
          id: shown.id,
          status: shown.status,
          health: shown.health ?? '-',
          replicas: instance
            ? `${instance.replicaCount} (${shown.replicas.map((replica) => replica.health ?? '-').join(', ')})`
            : String(database.replicas),
          endpoint: endpointUrl ?? `- (not deployed yet: replix db provision ${id})`,
          'latest build': latestBuild
            ? `${latestBuild.status}${latestBuild.finishedAt ? `, finished ${latestBuild.finishedAt}` : ''} (${latestBuild.id})`
            : 'none yet',
          ...(shown.lastError ? { 'last error': shown.lastError } : {}),
        });
        if (shown.query) {
          process.stdout.write(
            `\nQuery it (an API key from \`replix keys create ${id} --name <name>\` in REPLIX_API_KEY):\n  ${shown.query}\n`,
          );
        }
      }),
    );
}
