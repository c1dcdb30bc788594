import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  getV1BuildsByIdLogs,
  getV1DatabasesByIdInfraLogs,
  getV1DatabasesByIdInstanceLogs,
  unwrap,
} from '@replix/client';
import type { Command } from 'commander';
import { apiAction, apiClient } from './api-session.ts';

interface LogPage {
  lines: Array<{ message: string; timestamp: number }>;
  nextToken: string | null;
  done: boolean;
}

type ReadPage = (client: Client, id: string, nextToken: string | undefined) => Promise<LogPage>;

const POLL_MS = 1000;

/**
 * Prints a log page by page. Without --follow it drains what is there now (until an empty page
 * or done); with --follow it keeps polling until done, which a live instance's log never is.
 */
async function tail(
  read: ReadPage,
  id: string,
  options: { follow: boolean; json: boolean },
): Promise<void> {
  const client = apiClient();
  let token: string | undefined;
  for (;;) {
    const page = await read(client, id, token);
    for (const line of page.lines) {
      process.stdout.write(
        options.json
          ? `${JSON.stringify(line)}\n`
          : `${new Date(line.timestamp).toISOString()}  ${line.message}\n`,
      );
    }
    token = page.nextToken ?? token;
    if (page.done) return;
    if (page.lines.length === 0) {
      if (!options.follow) return;
      await sleep(POLL_MS);
    }
  }
}

const LOGS: Record<string, { argument: string; description: string; read: ReadPage }> = {
  build: {
    argument: '<buildId>',
    description: 'a build’s log (`replix builds list <dbId>` lists the builds)',
    read: (client, id, nextToken) =>
      unwrap(getV1BuildsByIdLogs({ client, path: { id }, query: { nextToken } })),
  },
  infra: {
    argument: '<dbId>',
    description: 'the log of the database’s latest deploy (infrastructure apply)',
    read: (client, id, nextToken) =>
      unwrap(getV1DatabasesByIdInfraLogs({ client, path: { id }, query: { nextToken } })),
  },
  instance: {
    argument: '<dbId>',
    description: 'recent log lines of the running instance (--follow tails it until Ctrl-C)',
    read: (client, id, nextToken) =>
      unwrap(getV1DatabasesByIdInstanceLogs({ client, path: { id }, query: { nextToken } })),
  },
};

/** `replix logs build|infra|instance <id> [--follow]`. */
export function addLogsCommands(program: Command): void {
  const logs = program.command('logs').description('build, deploy and instance logs');
  for (const [kind, { argument, description, read }] of Object.entries(LOGS)) {
    logs
      .command(`${kind} ${argument}`)
      .description(description)
      .option('-f, --follow', 'keep polling for new lines until the log is done', false)
      .option('--json', 'print each line as a JSON object (one a line)', false)
      .action(
        apiAction(`logs ${kind}`, (id: string, options: { follow: boolean; json: boolean }) =>
          tail(read, id, options),
        ),
      );
  }
}
