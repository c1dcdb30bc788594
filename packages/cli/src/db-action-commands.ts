import process from 'node:process';
import {
  type Client,
  deleteV1DatabasesById,
  postV1DatabasesByIdCancelGoal,
  postV1DatabasesByIdPause,
  postV1DatabasesByIdPauseReplication,
  postV1DatabasesByIdProvision,
  postV1DatabasesByIdRebuild,
  postV1DatabasesByIdReconfigure,
  postV1DatabasesByIdRedeploy,
  postV1DatabasesByIdReload,
  postV1DatabasesByIdResize,
  postV1DatabasesByIdResume,
  postV1DatabasesByIdResumeReplication,
  postV1DatabasesByIdTerminate,
  unwrap,
} from '@replix/client';
import { type Command, Option } from 'commander';
import { apiAction, apiClient, printJson } from './api-session.ts';
import { INSTANCE_SIZES, replicaCount } from './databases-commands.ts';
import { EXIT_USAGE } from './exit-codes.ts';
import { withInsteadCommand } from './instead-command.ts';

/** The answer's type differs per action (delete may answer 204 with nothing). */
type Call = (client: Client, id: string) => Promise<unknown>;

/** The actions without a body: each is one API call by the database's id. */
const SIMPLE_ACTIONS: Record<string, { description: string; call: Call }> = {
  provision: {
    description: 'build the database and start its instance',
    call: (client, id) => unwrap(postV1DatabasesByIdProvision({ client, path: { id } })),
  },
  rebuild: {
    description: 'a new build from the current settings, then a deploy',
    call: (client, id) => unwrap(postV1DatabasesByIdRebuild({ client, path: { id } })),
  },
  reconfigure: {
    description: 'redeploy the current build with the current runtime settings',
    call: (client, id) => unwrap(postV1DatabasesByIdReconfigure({ client, path: { id } })),
  },
  terminate: {
    description: 'remove the instance, keep the database (it can be provisioned again)',
    call: (client, id) => unwrap(postV1DatabasesByIdTerminate({ client, path: { id } })),
  },
  pause: {
    description: 'stop the instance, keep everything else',
    call: (client, id) => unwrap(postV1DatabasesByIdPause({ client, path: { id } })),
  },
  resume: {
    description: 'start a paused instance again',
    call: (client, id) => unwrap(postV1DatabasesByIdResume({ client, path: { id } })),
  },
  reload: {
    description: 'the instance re-reads the whole source now',
    call: (client, id) => unwrap(postV1DatabasesByIdReload({ client, path: { id } })),
  },
  'pause-replication': {
    description: 'the snapshot freezes; queries keep being served',
    call: (client, id) => unwrap(postV1DatabasesByIdPauseReplication({ client, path: { id } })),
  },
  'resume-replication': {
    description: 'apply source changes again',
    call: (client, id) => unwrap(postV1DatabasesByIdResumeReplication({ client, path: { id } })),
  },
  'cancel-goal': {
    description: 'cancel the queued action before the reconciler starts it',
    call: (client, id) => unwrap(postV1DatabasesByIdCancelGoal({ client, path: { id } })),
  },
  delete: {
    description: 'delete the database (after tearing down its instance, if any)',
    call: (client, id) => unwrap(deleteV1DatabasesById({ client, path: { id } })),
  },
};

/** A pending change the action leaves, as the API lists it (`notApplied`). */
interface NotApplied {
  readonly setting: string;
  readonly appliedBy: string;
}

/**
 * `<action> <id>: status running` style summary of an action's answer, and a line for each
 * change it leaves pending (a reconfigure's `notApplied`) with the command that applies it.
 */
export function outcomeLines(action: string, id: string, answer: unknown): string[] {
  const { notApplied = [], ...rest } = (
    typeof answer === 'object' && answer !== null ? answer : {}
  ) as { notApplied?: NotApplied[] };
  const fields = Object.entries(rest).map(([key, value]) => `${key} ${String(value)}`);
  return [
    `${action} ${id}: ${fields.length > 0 ? fields.join(', ') : 'done'}`,
    ...notApplied.map((change) => {
      const what =
        change.setting === 'schema' ? 'the source schema or schema config' : change.setting;
      return `not applied: ${what} changed since the current build; ${change.appliedBy} applies it: npx replix db ${change.appliedBy} ${id}`;
    }),
  ];
}

function printOutcome(action: string, id: string, answer: unknown, json: boolean): void {
  if (json) printJson(answer ?? {});
  else process.stdout.write(`${outcomeLines(action, id, answer).join('\n')}\n`);
}

/**
 * `replix db <action> <id>` (`db` is `databases`' short name): the lifecycle actions of a
 * database, added to `databases`. An action the database's status does not allow is answered
 * 409 with the reason, printed as the error with the `replix db` line of the action the reason
 * names instead.
 */
export function addDbActionCommands(db: Command): void {
  for (const [action, { description, call }] of Object.entries(SIMPLE_ACTIONS)) {
    db.command(`${action} <id>`)
      .description(description)
      .option('--json', 'print the API’s JSON', false)
      .action(
        apiAction(`db ${action}`, async (id: string, options: { json: boolean }) => {
          const answer = await withInsteadCommand(id, () => call(apiClient(), id));
          printOutcome(action, id, answer, options.json);
        }),
      );
  }

  db.command('redeploy <id>')
    .description('deploy an earlier succeeded build')
    .requiredOption('--build <buildId>', 'the build to deploy')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('db redeploy', async (id: string, options: { build: string; json: boolean }) => {
        const answer = await withInsteadCommand(id, () =>
          unwrap(
            postV1DatabasesByIdRedeploy({
              client: apiClient(),
              path: { id },
              body: { buildId: options.build },
            }),
          ),
        );
        printOutcome('redeploy', id, answer, options.json);
      }),
    );

  db.command('resize <id>')
    .description('move the instance to another size and/or replica count (at least one)')
    .addOption(new Option('--size <size>', 'the new instance size').choices(INSTANCE_SIZES))
    .option('--replicas <n>', 'the new number of read replicas')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction(
        'db resize',
        async (
          id: string,
          options: { size?: (typeof INSTANCE_SIZES)[number]; replicas?: string; json: boolean },
          command: Command,
        ) => {
          if (options.size === undefined && options.replicas === undefined) {
            command.error('error: name what to change: --size <size>, --replicas <n> or both.', {
              exitCode: EXIT_USAGE,
              code: 'replix.usage',
            });
          }
          const replicas = replicaCount(options.replicas);
          const answer = await withInsteadCommand(id, () =>
            unwrap(
              postV1DatabasesByIdResize({
                client: apiClient(),
                path: { id },
                body: { instanceSize: options.size, replicas },
              }),
            ),
          );
          printOutcome('resize', id, answer, options.json);
        },
      ),
    );
}
