import {
  SOURCE_BACKENDS,
  SOURCE_TLS_MODES,
  type SourceBackend,
  type SourceTlsMode,
} from '@replix/sources';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { ConnectionTable } from '../../../adapters/store/schema.ts';
import { REGIONS, type Region } from '../../../domain/regions.ts';
import { FAILED_CHECKS, type FailedCheck } from '../../source-access/test-connection.ts';
import { DateTime, iso, Uuid } from '../common-schemas.ts';

// Host names go into source URLs: no spaces, slashes, `@`, `?` or `#`.
const Host = Type.String({ minLength: 1, maxLength: 255, pattern: '^[^\\s/@?#]+$' });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Backend = Type.Enum([...SOURCE_BACKENDS], {
  description: 'The source engine; `mysql` covers MariaDB.',
});
const RegionSchema = Type.Enum([...REGIONS], {
  description:
    'Where instances run unless a database says otherwise; non-default regions need the Teams plan or above.',
});
const TlsMode = Type.Enum([...SOURCE_TLS_MODES], {
  description:
    'TLS to the source: `disable`, `prefer` (default), `require`, `verify-full` (certificate and host name checked).',
});
const PrivateKey = Type.String({
  minLength: 1,
  maxLength: 16_384,
  description: 'An unencrypted OpenSSH or PEM private key. Write-only.',
});

const SshInput = Type.Object(
  {
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    privateKey: PrivateKey,
  },
  {
    additionalProperties: false,
    description: 'Reach the source through this SSH server (port 22 by default).',
  },
);

const SshPatch = Type.Object(
  {
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    privateKey: Type.Optional(PrivateKey),
  },
  {
    additionalProperties: false,
    description:
      'Replaces the SSH settings; without privateKey the stored key is kept. null removes the tunnel.',
  },
);

const FailedCheckSchema = Type.Enum([...FAILED_CHECKS], {
  description:
    'Which check failed: `ssh` (the tunnel), `network` (reaching the server), `login` (user and password), `database` (the login database), `server` (a query once logged in).',
});

const ChangeLogReadiness = Type.Object(
  {
    logBin: Type.Boolean(),
    format: Type.Union([Type.String(), Type.Null()]),
    serverId: Type.Union([Type.Integer(), Type.Null()]),
    ready: Type.Boolean(),
    issues: Type.Array(Type.String()),
  },
  {
    description:
      'Change-log readiness: the binlog (MySQL), logical replication (PostgreSQL: format is wal_level) or CDC (SQL Server: format `cdc`).',
  },
);

const LastTest = Type.Object(
  {
    ok: Type.Boolean(),
    testedAt: DateTime,
    error: Type.Optional(Type.String({ description: 'Why the test failed (when ok is false).' })),
    failedCheck: Type.Optional(FailedCheckSchema),
    latencyMs: Type.Optional(Type.Number()),
    binlog: Type.Optional(ChangeLogReadiness),
  },
  {
    description:
      'The last test of the connection (on create, on a change of its server or credentials, or `POST /v1/connections/{id}/test`); null when it was saved untested.',
  },
);

const SkipTest = Type.Boolean({
  description:
    'Save without testing the connection first (default false: a failing test answers 422 `connection_test_failed` and nothing is saved).',
});

/** A source password: '' (or, when changing, null) for a user without one. Write-only. */
const Password = Type.String({
  maxLength: 1024,
  description: "Write-only. Omit it or send '' for a user without a password.",
});

export const Connection = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    backend: Backend,
    host: Type.String(),
    port: Type.Integer(),
    user: Type.String(),
    hasPassword: Type.Boolean({
      description:
        'A password is stored (sealed; it is never returned); false for a user without one.',
    }),
    defaultRegion: RegionSchema,
    tlsMode: TlsMode,
    ssh: Type.Union([
      Type.Object({
        host: Type.String(),
        port: Type.Integer(),
        user: Type.String(),
        hasPrivateKey: Type.Boolean(),
      }),
      Type.Null(),
    ]),
    lastTest: Type.Union([LastTest, Type.Null()]),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'Connection', description: 'A source server and the credentials to read it.' },
);

export const CreateConnectionBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    backend: Type.Optional(Backend),
    host: Host,
    port: Type.Optional(Port),
    user: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.Optional(Password),
    defaultRegion: Type.Optional(RegionSchema),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(SshInput),
    skipTest: Type.Optional(SkipTest),
  },
  {
    $id: 'CreateConnectionBody',
    additionalProperties: false,
    description:
      'The connection is tested first (as `POST /v1/connections/{id}/test` does) unless `skipTest` is true.',
  },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    host: Type.Optional(Host),
    port: Type.Optional(Port),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    password: Type.Optional(
      Type.Union([Password, Type.Null()], {
        description:
          "Write-only. '' or null: the user has no password (any stored one is removed).",
      }),
    ),
    defaultRegion: Type.Optional(RegionSchema),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(Type.Union([SshPatch, Type.Null()])),
    skipTest: Type.Optional(SkipTest),
  },
  {
    $id: 'UpdateConnectionBody',
    additionalProperties: false,
    description:
      'Fields to change; the backend cannot change. A change of host, port, user, password, TLS mode or SSH tunnel is tested first unless `skipTest` is true. Running instances keep the old settings until rebuilt or redeployed.',
  },
);
export type UpdateConnectionBody = Static<typeof UpdateConnectionBody>;

const LoginDatabase = Type.String({
  minLength: 1,
  description:
    'PostgreSQL: the database to log in to (default `postgres`); SQL Server: the database whose CDC is checked (default `master`).',
});

export const TestConnectionBody = Type.Object(
  {
    backend: Type.Optional(Backend),
    mysqlHost: Host,
    mysqlPort: Type.Optional(Port),
    mysqlUser: Type.String({ minLength: 1 }),
    mysqlPassword: Type.String({ minLength: 1 }),
    database: Type.Optional(LoginDatabase),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(SshInput),
  },
  {
    $id: 'TestConnectionBody',
    additionalProperties: false,
    description:
      'Raw credentials to check before saving a connection. The field names say mysql for every backend.',
  },
);
export type TestConnectionBody = Static<typeof TestConnectionBody>;

export const TestSavedConnectionBody = Type.Object(
  { database: Type.Optional(LoginDatabase) },
  {
    $id: 'TestSavedConnectionBody',
    additionalProperties: false,
    description: 'Optional; the stored host, credentials, TLS mode and SSH tunnel are used.',
  },
);

export const SourceSchemaQuery = Type.Object({
  sourceSchema: Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      "The source schema, as a database's `sourceSchema`: the database (MySQL), or `<database>[/<schema>]` (PostgreSQL, SQL Server).",
  }),
});

export const TestConnectionResult = Type.Object(
  {
    ok: Type.Boolean(),
    error: Type.Optional(
      Type.String({ description: 'Why the connection failed (when ok is false).' }),
    ),
    failedCheck: Type.Optional(FailedCheckSchema),
    latencyMs: Type.Optional(Type.Number({ description: 'Round trip of a trivial query, ms.' })),
    estimatedSizeGb: Type.Optional(
      Type.Number({
        description: 'Data plus index size in GB (10^9 bytes); omitted when it cannot be read.',
      }),
    ),
    availableSchemas: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Databases the user can use, system ones excluded.',
      }),
    ),
    binlog: Type.Optional(ChangeLogReadiness),
  },
  { $id: 'TestConnectionResult' },
);

export const ConnectionTestFailedResponse = Type.Object(
  { error: Type.String(), message: Type.String(), test: TestConnectionResult },
  {
    $id: 'ConnectionTestFailedResponse',
    description:
      'The error envelope of `connection_test_failed`, with the test result: nothing was saved.',
  },
);

/** The API view of a connection: secrets are reported as present, never returned. */
export function connectionResource(row: Selectable<ConnectionTable>) {
  return {
    id: row.id,
    name: row.name,
    backend: row.backend as SourceBackend,
    host: row.host,
    port: row.port,
    user: row.username,
    hasPassword: row.password_enc !== null,
    defaultRegion: row.default_region as Region,
    tlsMode: row.tls_mode as SourceTlsMode,
    ssh: row.ssh
      ? {
          host: row.ssh.host,
          port: row.ssh.port,
          user: row.ssh.user,
          hasPrivateKey: row.ssh_private_key_enc !== null,
        }
      : null,
    lastTest:
      row.last_test && row.last_tested_at
        ? {
            ...row.last_test,
            failedCheck: row.last_test.failedCheck as FailedCheck | undefined,
            testedAt: iso(row.last_tested_at),
          }
        : null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
