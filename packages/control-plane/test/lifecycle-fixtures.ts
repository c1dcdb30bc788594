import { randomBytes, randomUUID } from 'node:crypto';
import { parseSchemaConfig } from '@replix/engine';
import { type RunningInstance, startInstance } from '@replix/instance';
import { newKeyId } from '@replix/instance-protocol';
import pino from 'pino';
import { expect } from 'vitest';
import type { ApiContext } from '../src/api/context.ts';
import type { DatabaseStatus } from '../src/domain/database-lifecycle.ts';
import type { Goal } from '../src/domain/goal.ts';
import type { TestControlPlane } from './control-plane-harness.ts';

/**
 * Store rows for the control-plane tests: accounts, connections, databases, builds and
 * instances, written directly so every state (every cell of the lifecycle matrix) can be
 * reached quickly. The one place tests make these rows.
 */
export interface Caller {
  readonly token: string;
  readonly accountId: string;
}

/** What the row helpers need: the store and the secret box (a control plane's, or a bare store's). */
export interface StoreAccess {
  readonly context: Pick<ApiContext, 'db' | 'secrets'>;
}

/**
 * A token and its account, made on first use like any new user's; `plan` (if given) is then
 * set on the account. In a control plane without the api role, the account row is inserted
 * straight into the store.
 */
export async function caller(cp: TestControlPlane, email: string, plan?: string): Promise<Caller> {
  const token = await cp.token(email);
  if (!cp.url) {
    return { token, accountId: await insertAccount(cp, plan, email) };
  }
  const first = await cp.request('GET', '/v1/management-keys', { token });
  if (first.status !== 200) throw new Error(`cannot sign in ${email}: ${first.status}`);
  if (plan !== undefined) await setPlan(cp, email, plan);
  return { token, accountId: await accountOf(cp, email) };
}

/** The account of a user who has signed in. */
export async function accountOf(store: StoreAccess, email: string): Promise<string> {
  const user = await store.context.db
    .selectFrom('users')
    .select('account_id')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return user.account_id;
}

/** Puts the account of a user who has signed in on another plan. */
export async function setPlan(store: StoreAccess, email: string, plan: string): Promise<void> {
  await store.context.db
    .updateTable('accounts')
    .set({ plan })
    .where('id', '=', await accountOf(store, email))
    .execute();
}

/** An account row (no user signs in to it) and its id. */
export async function insertAccount(
  store: StoreAccess,
  plan = 'free',
  email?: string,
): Promise<string> {
  const id = randomUUID();
  await store.context.db
    .insertInto('accounts')
    .values({ id, email: email ?? `${id}@example.com`, plan })
    .execute();
  return id;
}

/** Whose rows they are: a signed-in caller, or just an account id. */
export type Owner = Pick<Caller, 'accountId'>;

export interface SourceServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly backend: 'mysql' | 'postgres';
}

/** Where a connection leads; by default a closed port (the source is not needed). */
export function sourceFromUrl(url: string): SourceServer {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    backend: parsed.protocol.startsWith('postgres') ? 'postgres' : 'mysql',
  };
}

export async function insertConnection(
  cp: StoreAccess,
  owner: Owner,
  source: SourceServer = {
    host: '127.0.0.1',
    port: 1,
    user: 'nobody',
    password: 'pw',
    backend: 'mysql',
  },
): Promise<string> {
  const id = randomUUID();
  await cp.context.db
    .insertInto('connections')
    .values({
      id,
      account_id: owner.accountId,
      name: `conn-${id.slice(0, 8)}`,
      backend: source.backend,
      host: source.host,
      port: source.port,
      username: source.user,
      password_enc: cp.context.secrets.seal(source.password),
      default_region: 'eu-west-1',
      tls_mode: 'disable',
      ssh: null,
      ssh_private_key_enc: null,
    })
    .execute();
  return id;
}

export interface DatabaseSeed {
  readonly status?: DatabaseStatus;
  readonly goal?: Goal | null;
  /** By default a new connection to a closed port (the source is not needed). */
  readonly connectionId?: string;
  readonly name?: string;
  readonly sourceSchema?: string;
  readonly schemaConfig?: Record<string, unknown>;
  readonly region?: string;
  readonly instanceSize?: string;
  /** Read replicas (default 1). */
  readonly replicas?: number;
  readonly syncMode?: string;
  readonly syncInterval?: number;
  readonly replicationPaused?: boolean;
  /** Adds a succeeded build and makes it the current one. */
  readonly withBuild?: boolean;
  /** Marks the database deployed with its current settings. */
  readonly deployed?: boolean;
  readonly keySecret?: Buffer;
}

export interface SeededDatabase {
  readonly id: string;
  readonly connectionId: string;
  readonly buildId: string | undefined;
  readonly keySecret: Buffer;
}

export async function insertDatabase(
  cp: StoreAccess,
  owner: Owner,
  seed: DatabaseSeed = {},
): Promise<SeededDatabase> {
  const { db, secrets } = cp.context;
  const id = randomUUID();
  const connectionId = seed.connectionId ?? (await insertConnection(cp, owner));
  const keySecret = seed.keySecret ?? randomBytes(32);
  const instanceSize = seed.instanceSize ?? 'xs';
  const syncMode = seed.syncMode ?? 'cdc';
  const syncInterval = seed.syncInterval ?? 1;
  await db
    .insertInto('databases')
    .values({
      id,
      account_id: owner.accountId,
      connection_id: connectionId,
      name: seed.name ?? `db-${id.slice(0, 8)}`,
      source_schema: seed.sourceSchema ?? 'app',
      schema_config: JSON.stringify(seed.schemaConfig ?? {}),
      region: seed.region ?? 'eu-west-1',
      instance_size: instanceSize,
      replicas: seed.replicas ?? 1,
      sync_mode: syncMode,
      sync_interval: syncInterval,
      log_level: 'info',
      safety_net: 0,
      status: seed.status ?? 'draft',
      goal: seed.goal ? JSON.stringify(seed.goal) : null,
      replication_paused: seed.replicationPaused ?? false,
      key_secret_enc: secrets.seal(keySecret),
      deployed_config: seed.deployed
        ? JSON.stringify({
            instanceSize,
            taskCpu: 0.25,
            taskMemoryMb: 512,
            syncMode,
            syncInterval,
            logLevel: 'info',
            safetyNet: 0,
          })
        : null,
    })
    .execute();
  let buildId: string | undefined;
  if (seed.withBuild) {
    buildId = await insertBuild(cp, owner, id, 'succeeded');
    await db
      .updateTable('databases')
      .set({ current_build_id: buildId })
      .where('id', '=', id)
      .execute();
  }
  return { id, connectionId, buildId, keySecret };
}

export async function insertBuild(
  cp: StoreAccess,
  owner: Owner,
  databaseId: string,
  status: 'queued' | 'in_progress' | 'succeeded' | 'failed',
): Promise<string> {
  const id = randomUUID();
  const finished = status === 'succeeded' || status === 'failed';
  await cp.context.db
    .insertInto('builds')
    .values({
      id,
      database_id: databaseId,
      account_id: owner.accountId,
      region: 'eu-west-1',
      status,
      image_uri: finished ? `file:///tmp/artifacts/${id}/` : null,
      started_at: new Date(),
      finished_at: finished ? new Date() : null,
      duration_seconds: finished ? 3 : null,
      compute_type: 'process.small',
      cost_estimate_cents: finished ? 1 : null,
    })
    .execute();
  return id;
}

/** A webhook subscription row (written straight to the store, past registration's checks) and its id. */
export async function insertWebhookSubscription(
  cp: StoreAccess,
  owner: Owner,
  databaseId: string,
  url: string,
  secret = randomBytes(32).toString('hex'),
  eventTypes: string[] = ['build.failed'],
): Promise<string> {
  const id = randomUUID();
  await cp.context.db
    .insertInto('webhook_subscriptions')
    .values({
      id,
      account_id: owner.accountId,
      database_id: databaseId,
      url,
      event_types: JSON.stringify(eventTypes),
      description: null,
      secret_enc: cp.context.secrets.seal(secret),
    })
    .execute();
  return id;
}

/** A live instances row pointing at `endpointUrl` (a real instance, or a closed port). */
export async function insertInstance(
  cp: StoreAccess,
  databaseId: string,
  endpointUrl: string,
  controlKeyId = newKeyId(),
  buildId: string | null = null,
): Promise<string> {
  const id = randomUUID();
  await cp.context.db
    .insertInto('instances')
    .values({
      id,
      database_id: databaseId,
      build_id: buildId,
      driver: 'process',
      container_ref: 'process:0',
      endpoint_url: endpointUrl,
      private_url: endpointUrl,
      port: Number(new URL(endpointUrl).port),
      pid: null,
      control_key_id: controlKeyId,
    })
    .execute();
  return id;
}

/**
 * A real instance over a source database, accepting the control key of a seeded database as an
 * admin key (as the reconciler starts one), so the immediate actions reach a real /reload and /replication.
 */
export async function startRealInstance(
  sourceUrl: string,
  keySecret: Buffer,
  controlKeyId: string,
): Promise<RunningInstance> {
  return startInstance(
    {
      sourceUrl,
      schemaConfig: parseSchemaConfig({}),
      host: '127.0.0.1',
      port: 0,
      keySecret,
      keyIds: [],
      adminKeyIds: [controlKeyId],
      generatedKey: false,
      buildHash: 'test00000000',
      logLevel: 'silent',
    },
    pino({ level: 'silent' }),
  );
}

/** Polls `read` until `done` accepts its value; fails after `timeoutMs` naming `what` and the last value. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    last = await read();
  }
  return last;
}

/**
 * Waits, through the API, until the database is `wanted` (or failed, which ends the wait at
 * once), checks it got there without an error and returns its instance status.
 */
export async function reachStatus(
  cp: TestControlPlane,
  token: string,
  databaseId: string,
  wanted: string,
  timeoutMs = 180_000,
) {
  const status = await pollUntil(
    async () => (await cp.request('GET', `/v1/databases/${databaseId}/instance`, { token })).body,
    (s) => s.database.status === wanted || s.database.status === 'failed',
    timeoutMs,
    `status ${wanted}`,
  );
  expect(status.database.lastError ?? null).toBeNull();
  expect(status.database.status).toBe(wanted);
  return status;
}

/**
 * The user's way from a connection to a running database, through the API: creates the
 * database, checks the source tables it sees, provisions it and waits until it runs on a
 * succeeded build. Returns its id and its instance status.
 */
export async function provisionThroughApi(
  cp: TestControlPlane,
  token: string,
  database: { name: string; connectionId: string; sourceSchema: string; tables: string[] },
  timeoutMs?: number,
) {
  const created = await cp.request('POST', '/v1/databases', {
    token,
    body: {
      name: database.name,
      connectionId: database.connectionId,
      sourceSchema: database.sourceSchema,
      schemaConfig: {},
    },
  });
  expect(created.status).toBe(201);
  const databaseId: string = created.body.id;

  const schema = await cp.request('GET', `/v1/databases/${databaseId}/schema`, { token });
  expect(schema.status).toBe(200);
  expect(schema.body.tables.map((t: { name: string }) => t.name).sort()).toEqual(database.tables);

  const provision = await cp.request('POST', `/v1/databases/${databaseId}/provision`, { token });
  expect(provision.status).toBe(202);
  const running = await reachStatus(cp, token, databaseId, 'running', timeoutMs);
  expect(running.latestBuild.status).toBe('succeeded');
  return { databaseId, running };
}
