import { randomUUID } from 'node:crypto';
import { DEFAULT_SOURCE_BACKEND, SOURCE_DIALECTS, type SourceTlsMode } from '@replix/sources';
import { recordAudit } from '../../../adapters/events/audit-log.ts';
import { accountPlan } from '../../../adapters/store/account-plan.ts';
import { databaseNamesOn } from '../../../adapters/store/database-store.ts';
import { fieldChanges } from '../../../adapters/store/field-changes.ts';
import type { ConnectionTable } from '../../../adapters/store/schema.ts';
import { ownedConnection } from '../../../adapters/store/tenancy.ts';
import type { ApiContext } from '../../../api/context.ts';
import { ApiError } from '../../../domain/errors.ts';
import { assertRegion } from '../../../domain/plan-enforcement.ts';
import { DEFAULT_REGION } from '../../../domain/regions.ts';
import { testSavedConnection } from '../../source-access/saved-connection-test.ts';
import { sourcePassword } from '../../source-access/source-password.ts';
import { readSourceSchema } from '../../source-access/source-schema-read.ts';
import { assertUsablePrivateKey } from '../../source-access/ssh-private-key.ts';
import { type TestConnectionInput, testConnection } from '../../source-access/test-connection.ts';
import { lastTestColumns, requirePassingTest } from './connection-test-gate.ts';
import {
  insertConnectionRow,
  listConnectionRows,
  lockConnectionRow,
  markConnectionDeleted,
  recordConnectionTest,
  updateConnectionRow,
} from './connections-queries.ts';
import {
  type CreateConnectionBody,
  connectionResource,
  type TestConnectionBody,
  type UpdateConnectionBody,
} from './connections-schemas.ts';

type Context = Pick<ApiContext, 'db' | 'secrets'>;
type ConnectionRow = Awaited<ReturnType<typeof ownedConnection>>;

/** Checks raw credentials before a connection is saved. */
export function testRawConnection(body: TestConnectionBody) {
  const backend = body.backend ?? DEFAULT_SOURCE_BACKEND;
  return testConnection({
    backend,
    host: body.mysqlHost,
    port: body.mysqlPort ?? SOURCE_DIALECTS[backend].defaultPort,
    user: body.mysqlUser,
    password: body.mysqlPassword,
    database: body.database,
    tlsMode: body.tlsMode,
    ssh: body.ssh && { ...body.ssh, port: body.ssh.port ?? 22 },
  });
}

export async function listConnections({ db }: Context, accountId: string) {
  return (await listConnectionRows(db, accountId)).map(connectionResource);
}

export async function getConnection({ db }: Context, accountId: string, id: string) {
  return connectionResource(await ownedConnection(db, accountId, id));
}

/** Saves a connection with its password and SSH key sealed; the region must fit the plan. */
export async function createConnection(
  { db, secrets }: Context,
  accountId: string,
  body: CreateConnectionBody,
) {
  const backend = body.backend ?? DEFAULT_SOURCE_BACKEND;
  const defaultRegion = body.defaultRegion ?? DEFAULT_REGION;
  assertRegion(await accountPlan(db, accountId), defaultRegion);
  if (body.ssh) await assertUsablePrivateKey(body.ssh.privateKey, 'body.ssh.privateKey');
  const port = body.port ?? SOURCE_DIALECTS[backend].defaultPort;
  const password = body.password ?? '';
  const ssh = body.ssh && { ...body.ssh, port: body.ssh.port ?? 22 };
  const test = body.skipTest
    ? undefined
    : await requirePassingTest({
        backend,
        host: body.host,
        port,
        user: body.user,
        password,
        tlsMode: body.tlsMode,
        ssh,
      });
  const id = randomUUID();
  const now = new Date();
  const row = await db.transaction().execute(async (tx) => {
    const inserted = await insertConnectionRow(tx, {
      id,
      account_id: accountId,
      name: body.name,
      backend,
      host: body.host,
      port,
      username: body.user,
      password_enc: password === '' ? null : secrets.seal(password),
      default_region: defaultRegion,
      tls_mode: body.tlsMode ?? 'prefer',
      ssh: ssh ? JSON.stringify({ host: ssh.host, port: ssh.port, user: ssh.user }) : null,
      ssh_private_key_enc: ssh ? secrets.seal(ssh.privateKey) : null,
      ...lastTestColumns(test, now),
      created_at: now,
      updated_at: now,
    });
    await recordAudit(tx, {
      accountId,
      entityType: 'connection',
      entityId: id,
      eventType: 'connection.created',
      payload: {
        name: body.name,
        backend,
        ssh: body.ssh !== undefined,
        tested: test !== undefined,
      },
    });
    return inserted;
  });
  return connectionResource(row);
}

/**
 * Tests a saved connection with its stored settings; `database` is the login database. The
 * result becomes the connection's last test.
 */
export async function testConnectionOf(
  { db, secrets }: Context,
  accountId: string,
  id: string,
  database: string | undefined,
) {
  const connection = await ownedConnection(db, accountId, id);
  const result = await testSavedConnection(connection, secrets, database);
  await recordConnectionTest(db, connection.id, lastTestColumns(result, new Date()));
  return result;
}

/** Reads a source schema live through a saved connection. */
export async function readConnectionSchema(
  { db, secrets }: Context,
  accountId: string,
  id: string,
  sourceSchema: string,
) {
  const connection = await ownedConnection(db, accountId, id);
  return readSourceSchema(connection, secrets, sourceSchema);
}

/** The fields that change how the source is reached: changing one tests the connection again. */
const REACH_FIELDS = new Set(['host', 'port', 'user', 'password', 'tlsMode', 'ssh']);

/** The connection as the update would leave it, as a test input (secrets opened). */
function testInputAfter(
  current: ConnectionRow,
  body: UpdateConnectionBody,
  secrets: Context['secrets'],
): TestConnectionInput {
  const storedKey = current.ssh_private_key_enc && secrets.open(current.ssh_private_key_enc);
  let ssh: TestConnectionInput['ssh'];
  if (body.ssh) {
    const privateKey = body.ssh.privateKey ?? storedKey;
    if (privateKey) ssh = { ...body.ssh, port: body.ssh.port ?? 22, privateKey };
  } else if (body.ssh === undefined && current.ssh && storedKey) {
    ssh = { ...current.ssh, privateKey: storedKey };
  }
  return {
    backend: current.backend as TestConnectionInput['backend'],
    host: body.host ?? current.host,
    port: body.port ?? current.port,
    user: body.user ?? current.username,
    password:
      body.password === undefined ? sourcePassword(current, secrets) : (body.password ?? ''),
    tlsMode: (body.tlsMode ?? current.tls_mode) as SourceTlsMode,
    ssh,
  };
}

/**
 * Changes a connection; omitted fields and secrets stay as they are. A change of how the
 * source is reached is tested first (unless `skipTest`).
 */
export async function updateConnection(
  { db, secrets }: Context,
  accountId: string,
  id: string,
  body: UpdateConnectionBody,
) {
  const current = await ownedConnection(db, accountId, id);
  if (body.defaultRegion !== undefined && body.defaultRegion !== current.default_region) {
    assertRegion(await accountPlan(db, accountId), body.defaultRegion);
  }
  const { changes, changed, set } = fieldChanges<ConnectionTable>();
  if (body.name !== undefined) set('name', 'name', body.name);
  if (body.host !== undefined) set('host', 'host', body.host);
  if (body.port !== undefined) set('port', 'port', body.port);
  if (body.user !== undefined) set('user', 'username', body.user);
  if (body.password !== undefined) {
    set('password', 'password_enc', body.password ? secrets.seal(body.password) : null);
  }
  if (body.defaultRegion !== undefined) set('defaultRegion', 'default_region', body.defaultRegion);
  if (body.tlsMode !== undefined) set('tlsMode', 'tls_mode', body.tlsMode as SourceTlsMode);
  if (body.ssh === null) {
    set('ssh', 'ssh', null);
    changes.ssh_private_key_enc = null;
  } else if (body.ssh !== undefined) {
    const { privateKey } = body.ssh;
    if (privateKey !== undefined) {
      await assertUsablePrivateKey(privateKey, 'body.ssh.privateKey');
      changes.ssh_private_key_enc = secrets.seal(privateKey);
    } else if (current.ssh_private_key_enc === null) {
      throw new ApiError(
        'validation_failed',
        'body.ssh.privateKey is required: the connection has no SSH key yet.',
      );
    }
    set(
      'ssh',
      'ssh',
      JSON.stringify({ host: body.ssh.host, port: body.ssh.port ?? 22, user: body.ssh.user }),
    );
  }
  if (changed.some((field) => REACH_FIELDS.has(field))) {
    const test = body.skipTest
      ? undefined
      : await requirePassingTest(testInputAfter(current, body, secrets));
    Object.assign(changes, lastTestColumns(test, new Date()));
  }
  const row = await db.transaction().execute(async (tx) => {
    const updated = await updateConnectionRow(tx, current.id, changes);
    await recordAudit(tx, {
      accountId,
      entityType: 'connection',
      entityId: current.id,
      eventType: 'connection.updated',
      payload: { changed },
    });
    return updated;
  });
  return connectionResource(row);
}

/** Deletes a connection no database uses any more; 409 names the databases that still do. */
export async function deleteConnection({ db }: Context, accountId: string, id: string) {
  const current = await ownedConnection(db, accountId, id);
  await db.transaction().execute(async (tx) => {
    // Locks the connection, so a database cannot be created on it meanwhile.
    await lockConnectionRow(tx, current.id);
    const users = await databaseNamesOn(tx, current.id);
    if (users.length > 0) {
      throw new ApiError(
        'conflict',
        `The connection is used by ${users.length} database(s) (${users.slice(0, 5).join(', ')}); delete them first.`,
      );
    }
    await markConnectionDeleted(tx, current.id);
    await recordAudit(tx, {
      accountId,
      entityType: 'connection',
      entityId: current.id,
      eventType: 'connection.deleted',
      payload: { name: current.name },
    });
  });
}
