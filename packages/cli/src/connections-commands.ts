import { readFileSync } from 'node:fs';
import {
  getV1Connections,
  type PostV1ConnectionsData,
  postV1Connections,
  postV1ConnectionsTestConnection,
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

interface CredentialOptions {
  backend: SourceBackend;
  host: string;
  port?: string;
  user: string;
  password?: string;
  tlsMode?: SourceTlsMode;
  sshHost?: string;
  sshPort?: string;
  sshUser?: string;
  sshKey?: string;
  json: boolean;
}

/** The source credentials both `create` and `test` take. */
function credentialOptions(command: Command): Command {
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

function password(options: CredentialOptions): string {
  const given = options.password ?? cliEnvironment().REPLIX_SOURCE_PASSWORD;
  if (given === undefined) {
    throw new CommandFailure('give the source password with --password or REPLIX_SOURCE_PASSWORD.');
  }
  return given;
}

function ssh(options: CredentialOptions): PostV1ConnectionsData['body']['ssh'] {
  if (options.sshHost === undefined) return undefined;
  if (options.sshUser === undefined || options.sshKey === undefined) {
    throw new CommandFailure('--ssh-host needs --ssh-user and --ssh-key.');
  }
  let privateKey: string;
  try {
    privateKey = readFileSync(options.sshKey, 'utf8');
  } catch {
    throw new CommandFailure(`cannot read the SSH key file ${options.sshKey}.`);
  }
  return {
    host: options.sshHost,
    port: port(options.sshPort, '--ssh-port'),
    user: options.sshUser,
    privateKey,
  };
}

/** `replix connections list|create|test`: source servers and their credentials. */
export function addConnectionsCommands(program: Command): void {
  const connections = program
    .command('connections')
    .description('source database servers: list, create, test credentials');

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

  credentialOptions(
    connections
      .command('create')
      .description('save a connection (the password is stored sealed and never shown)')
      .requiredOption('--name <name>', 'a name for the connection')
      .addOption(
        new Option('--region <region>', 'default region of its databases').choices([
          'eu-west-1',
          'us-east-1',
        ]),
      ),
  ).action(
    apiAction(
      'connections create',
      async (options: CredentialOptions & { name: string; region?: 'eu-west-1' | 'us-east-1' }) => {
        const created = await unwrap(
          postV1Connections({
            client: apiClient(),
            body: {
              name: options.name,
              backend: options.backend,
              host: options.host,
              port: port(options.port, '--port'),
              user: options.user,
              password: password(options),
              defaultRegion: options.region,
              tlsMode: options.tlsMode,
              ssh: ssh(options),
            },
          }),
        );
        if (options.json) return printJson(created);
        process.stdout.write(`Created connection ${created.id} (${created.name}).\n`);
      },
    ),
  );

  credentialOptions(
    connections
      .command('test')
      .description('check credentials: reachability, latency, schemas, size, change-log readiness')
      .option(
        '--database <name>',
        'PostgreSQL: the database to log in to; SQL Server: whose CDC to check',
      ),
  ).action(
    apiAction('connections test', async (options: CredentialOptions & { database?: string }) => {
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
