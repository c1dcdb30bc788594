import {
  SOURCE_BACKENDS,
  SOURCE_TLS_MODES,
  type SourceBackend,
  type SourceTlsMode,
} from '@replix/sources';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { DateTime, iso, Uuid } from '../../api/common-schemas.ts';
import { REGIONS, type Region } from '../../connections/regions.ts';
import type { ConnectionTable } from '../../store/schema.ts';

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

export const Connection = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    backend: Backend,
    host: Type.String(),
    port: Type.Integer(),
    user: Type.String(),
    hasPassword: Type.Boolean({
      description: 'The password is stored (sealed); it is never returned.',
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
    password: Type.String({ minLength: 1, maxLength: 1024, description: 'Write-only.' }),
    defaultRegion: Type.Optional(RegionSchema),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(SshInput),
  },
  { $id: 'CreateConnectionBody', additionalProperties: false },
);
export type CreateConnectionBody = Static<typeof CreateConnectionBody>;

export const UpdateConnectionBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    host: Type.Optional(Host),
    port: Type.Optional(Port),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    defaultRegion: Type.Optional(RegionSchema),
    tlsMode: Type.Optional(TlsMode),
    ssh: Type.Optional(Type.Union([SshPatch, Type.Null()])),
  },
  {
    $id: 'UpdateConnectionBody',
    additionalProperties: false,
    description:
      'Fields to change; the backend cannot change. Running instances keep the old settings until rebuilt or redeployed.',
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
    binlog: Type.Optional(
      Type.Object(
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
      ),
    ),
  },
  { $id: 'TestConnectionResult' },
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
    hasPassword: true,
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
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
