import { getV1DatabasesByIdBuilds, unwrap } from '@replix/client';
import type { Command } from 'commander';
import { apiAction, apiClient, printJson, printTable } from './api-session.ts';

/** `replix builds list <dbId>`: a database's builds, newest first. */
export function addBuildsCommands(program: Command): void {
  const builds = program.command('builds').description('builds of a database');

  builds
    .command('list <dbId>')
    .description('list a database’s builds (`replix logs build <buildId>` shows one’s log)')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('builds list', async (dbId: string, options: { json: boolean }) => {
        const rows = await unwrap(
          getV1DatabasesByIdBuilds({ client: apiClient(), path: { id: dbId } }),
        );
        if (options.json) return printJson(rows);
        printTable(
          rows,
          ['id', 'status', 'createdAt', 'finishedAt', 'buildDurationSeconds'],
          '(no builds)',
        );
      }),
    );
}
