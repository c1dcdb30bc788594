import { readFileSync } from 'node:fs';
import process from 'node:process';
import {
  deleteV1ConnectionsById,
  getV1Connections,
  getV1ConnectionsById,
  type PatchV1ConnectionsByIdData,
  type PostV1ConnectionsData,
  patchV1ConnectionsById,
  postV1Connections,
  postV1ConnectionsByIdTest,
  postV1ConnectionsTestConnection,
  ReplixApiError,
  unwrap,
} from '@replix/client';
import {
  DEFAULT_SOURCE_BACKEND,
  SOURCE_BACKENDS,
  SOURCE_TLS_MODES,
  type SourceBackend,
  type SourceTlsMode,
} from '@replix/sources/dialect';
import { type Command, Option } from 'commander';
import {
  apiAction,
  apiClient,
  CommandFailure,
  printFields,
  printJson,
  printTable,
} from './api-session.ts';
import { cliEnvironment } from './cli-environment.ts';

const REGIONS = ['eu-west-1', 'us-east-1'] as const;
type Region = (typeof REGIONS)[number];

interface CredentialOptions {
  backend: SourceBackend;
  host: string;
  port?: string;
  user: string;
  /** false with --no-password: the source user has none. */
  password?: string | false;
  tlsMode?: SourceTlsMode;
  sshHost?: string;
  sshPort?: string;
  sshUser?: string;
  sshKey?: string;
  json: boolean;
}

/**
 * The source credentials both `create` and `test` take. `test` hides `--no-password`: the raw
 * test's body needs a password (the API contract), so there it only explains the other ways.
 */
function credentialOptions(command: Command, withoutPassword = true): Command {
  return command
    .addOption(
      new Option('--backend <engine>', 'source engine (mysql covers MariaDB)')
        .choices(SOURCE_BACKENDS)
        .default(DEFAULT_SOURCE_BACKEND),
    )
    .requiredOption('--host <host>', 'source server host')
    .option('--port <n>', 'source server port (default: the engine’s)')
    .requiredOption('--user <user>', 'source user')
    .option('--password <password>', 'source password (default REPLIX_SOURCE_PASSWORD)')
    .addOption(
      new Option(
        '--no-password',
        'the source user has no password (MariaDB, PostgreSQL trust)',
      ).hideHelp(!withoutPassword),
    )
    .addOption(new Option('--tls-mode <mode>', 'TLS to the source').choices(SOURCE_TLS_MODES))
    .option('--ssh-host <host>', 'reach the source through this SSH server')
    .option('--ssh-port <n>', 'SSH port (default 22)')
    .option('--ssh-user <user>', 'SSH user')
    .option('--ssh-key <file>', 'unencrypted OpenSSH or PEM private key file')
    .option('--json', 'print the API’s JSON', false);
}

function port(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new CommandFailure(`${flag} must be a port.`);
  return n;
}

/** The source password: --password, else REPLIX_SOURCE_PASSWORD; '' with --no-password. */
function password(options: Pick<CredentialOptions, 'password'>): string {
  if (options.password === false) return '';
  const given = options.password ?? cliEnvironment().REPLIX_SOURCE_PASSWORD;
  if (given === undefined) {
    throw new CommandFailure(
      'give the source password with --password or REPLIX_SOURCE_PASSWORD, or --no-password for a user without one.',
    );
  }
  return given;
}

/**
 * A refused save (`connection_test_failed`): prints the test result like `connections test`
 * does and fails with the reason and the way to save it anyway. Other errors pass through.
 */
function testFailure(error: unknown, json: boolean): unknown {
  if (!(error instanceof ReplixApiError) || error.error !== 'connection_test_failed') return error;
  const test = error.details.test as
    | { ok: boolean; error?: string; failedCheck?: string }
    | undefined;
  if (test) {
    if (json) printJson(test);
    else printFields(test);
  }
  const check = test?.failedCheck ? ` (${test.failedCheck})` : '';
  return new CommandFailure(
    `the connection test failed${check}: ${test?.error ?? error.message} Nothing was saved: fix the settings, or save it anyway with --skip-test.`,
  );
}

/** One line on what the save's test found (ok and change-log readiness). */
function testSummary(
  lastTest: {
    ok: boolean;
    binlog?: { ready: boolean; issues: string[] };
  } | null,
): string {
  if (!lastTest) return 'saved untested (--skip-test)';
  if (!lastTest.binlog) return 'test ok';
  return lastTest.binlog.ready
    ? 'test ok, change log ready'
    : `test ok, change log not ready (use poll sync or fix: ${lastTest.binlog.issues.join('; ')})`;
}

function sshKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new CommandFailure(`cannot read the SSH key file ${path}.`);
  }
}

function ssh(options: CredentialOptions): PostV1ConnectionsData['body']['ssh'] {
  if (options.sshHost === undefined) return undefined;
  if (options.sshUser === undefined || options.sshKey === undefined) {
    throw new CommandFailure('--ssh-host needs --ssh-user and --ssh-key.');
  }
  return {
    host: options.sshHost,
    port: port(options.sshPort, '--ssh-port'),
    user: options.sshUser,
    privateKey: sshKeyFile(options.sshKey),
  };
}

/** `update`'s tunnel change: new settings (the stored key kept without --ssh-key), none, or null. */
function sshChange(
  options: Pick<CredentialOptions, 'sshHost' | 'sshPort' | 'sshUser' | 'sshKey'> & {
    ssh?: boolean;
  },
): PatchV1ConnectionsByIdData['body']['ssh'] {
  if (options.ssh === false) {
    if (options.sshHost !== undefined)
      throw new CommandFailure('give --no-ssh or --ssh-host, not both.');
    return null;
  }
  if (options.sshHost === undefined) return undefined;
  if (options.sshUser === undefined) {
    throw new CommandFailure(
      '--ssh-host needs --ssh-user (and --ssh-key, unless the stored key stays).',
    );
  }
  return {
    host: options.sshHost,
    port: port(options.sshPort, '--ssh-port'),
    user: options.sshUser,
    privateKey: options.sshKey === undefined ? undefined : sshKeyFile(options.sshKey),
  };
}

/**
 * `replix connections list|get|create|update|delete|test|check`: source servers and their
 * credentials.
 */
export function addConnectionsCommands(program: Command): void {
  const connections = program
    .command('connections')
    .description('source database servers: list, show, create, change, delete, test credentials');

  connections
    .command('list')
    .description('list the account’s connections')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('connections list', async (options: { json: boolean }) => {
        const rows = await unwrap(getV1Connections({ client: apiClient() }));
        if (options.json) return printJson(rows);
        printTable(
          rows,
          ['id', 'name', 'backend', 'host', 'port', 'user', 'defaultRegion'],
          '(no connections)',
        );
      }),
    );

  connections
    .command('get <id>')
    .description('show one connection, with its last test')
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction('connections get', async (id: string, options: { json: boolean }) => {
        const connection = await unwrap(
          getV1ConnectionsById({ client: apiClient(), path: { id } }),
        );
        if (options.json) return printJson(connection);
        printFields(connection);
      }),
    );

  credentialOptions(
    connections
      .command('create')
      .description(
        'test a connection, then save it (the password is stored sealed and never shown)',
      )
      .requiredOption('--name <name>', 'a name for the connection')
      .addOption(
        new Option('--region <region>', 'default region of its databases').choices(REGIONS),
      )
      .option('--skip-test', 'save it even if the connection test fails', false),
  ).action(
    apiAction(
      'connections create',
      async (options: CredentialOptions & { name: string; region?: Region; skipTest: boolean }) => {
        const body = {
          name: options.name,
          backend: options.backend,
          host: options.host,
          port: port(options.port, '--port'),
          user: options.user,
          password: password(options),
          defaultRegion: options.region,
          tlsMode: options.tlsMode,
          ssh: ssh(options),
          skipTest: options.skipTest || undefined,
        };
        const created = await unwrap(postV1Connections({ client: apiClient(), body })).catch(
          (error: unknown) => {
            throw testFailure(error, options.json);
          },
        );
        if (options.json) return printJson(created);
        process.stdout.write(
          `Created connection ${created.id} (${created.name}): ${testSummary(created.lastTest)}.\n`,
        );
      },
    ),
  );

  connections
    .command('update <id>')
    .description('change a connection; a new server or credentials are tested first')
    .option('--name <name>', 'a new name')
    .option('--host <host>', 'source server host')
    .option('--port <n>', 'source server port')
    .option('--user <user>', 'source user')
    .option('--password <password>', 'a new source password')
    .option('--no-password', 'the source user has no password (removes the stored one)')
    .addOption(new Option('--tls-mode <mode>', 'TLS to the source').choices(SOURCE_TLS_MODES))
    .addOption(new Option('--region <region>', 'default region of its databases').choices(REGIONS))
    .option('--ssh-host <host>', 'reach the source through this SSH server (replaces the tunnel)')
    .option('--ssh-port <n>', 'SSH port (default 22)')
    .option('--ssh-user <user>', 'SSH user')
    .option('--ssh-key <file>', 'a new private key file (default: keep the stored key)')
    .option('--no-ssh', 'remove the SSH tunnel')
    .option('--skip-test', 'save the change even if the connection test fails', false)
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction(
        'connections update',
        async (
          id: string,
          options: {
            name?: string;
            host?: string;
            port?: string;
            user?: string;
            password?: string | false;
            tlsMode?: SourceTlsMode;
            region?: Region;
            sshHost?: string;
            sshPort?: string;
            sshUser?: string;
            sshKey?: string;
            ssh?: boolean;
            skipTest: boolean;
            json: boolean;
          },
        ) => {
          const body = {
            name: options.name,
            host: options.host,
            port: port(options.port, '--port'),
            user: options.user,
            password: options.password === undefined ? undefined : password(options),
            tlsMode: options.tlsMode,
            defaultRegion: options.region,
            ssh: sshChange(options),
            skipTest: options.skipTest || undefined,
          };
          if (Object.values(body).every((value) => value === undefined)) {
            throw new CommandFailure('nothing to change: give at least one option (see --help).');
          }
          const updated = await unwrap(
            patchV1ConnectionsById({ client: apiClient(), path: { id }, body }),
          ).catch((error: unknown) => {
            throw testFailure(error, options.json);
          });
          if (options.json) return printJson(updated);
          process.stdout.write(`Updated connection ${updated.id} (${updated.name}).\n`);
        },
      ),
    );

  connections
    .command('check <id>')
    .description('test a saved connection with its stored credentials, TLS mode and SSH tunnel')
    .option(
      '--database <name>',
      'PostgreSQL: the database to log in to; SQL Server: whose CDC to check',
    )
    .option('--json', 'print the API’s JSON', false)
    .action(
      apiAction(
        'connections check',
        async (id: string, options: { database?: string; json: boolean }) => {
          const result = await unwrap(
            postV1ConnectionsByIdTest({
              client: apiClient(),
              path: { id },
              body: { database: options.database },
            }),
          );
          if (options.json) printJson(result);
          else printFields(result);
          if (!result.ok) {
            throw new CommandFailure(
              `the connection test failed: ${result.error ?? 'no reason given'}`,
            );
          }
        },
      ),
    );

  connections
    .command('delete <id>')
    .description('delete a connection no database uses any more')
    .action(
      apiAction('connections delete', async (id: string) => {
        await unwrap(deleteV1ConnectionsById({ client: apiClient(), path: { id } }));
        process.stdout.write(`Deleted connection ${id}.\n`);
      }),
    );

  credentialOptions(
    connections
      .command('test')
      .description('check credentials: reachability, latency, schemas, size, change-log readiness')
      .option(
        '--database <name>',
        'PostgreSQL: the database to log in to; SQL Server: whose CDC to check',
      ),
    false,
  ).action(
    apiAction('connections test', async (options: CredentialOptions & { database?: string }) => {
      if (options.password === false) {
        // The raw test's body needs a password (the API contract); a save tests without one.
        throw new CommandFailure(
          'the raw credentials test needs a password; `replix connections create --no-password` tests a user without one before saving it, and `replix connections check <id>` tests it saved.',
        );
      }
      const result = await unwrap(
        postV1ConnectionsTestConnection({
          client: apiClient(),
          body: {
            backend: options.backend,
            mysqlHost: options.host,
            mysqlPort: port(options.port, '--port'),
            mysqlUser: options.user,
            mysqlPassword: password(options),
            database: options.database,
            tlsMode: options.tlsMode,
            ssh: ssh(options),
          },
        }),
      );
      if (options.json) printJson(result);
      else printFields(result);
      // A failed check is an answer, not an API error; the exit code still says it failed.
      if (!result.ok)
        throw new CommandFailure(
          `the connection test failed: ${result.error ?? 'no reason given'}`,
        );
    }),
  );
}
