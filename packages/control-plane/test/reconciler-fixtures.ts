import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { newKeyId } from '@replix/instance-protocol';
import type { Kysely } from 'kysely';
import { processesUnder } from '../src/adapters/drivers/process-identity.ts';
import { liveInstancesOf } from '../src/adapters/store/instance-store.ts';
import type { Store } from '../src/adapters/store/schema.ts';
import type { SecretBox } from '../src/adapters/store/secret-box.ts';
import type { Goal } from '../src/domain/goal.ts';
import {
  insertAccount,
  insertConnection,
  insertDatabase,
  sourceFromUrl,
} from './lifecycle-fixtures.ts';

/** Store rows for reconciler tests: an account, a connection to a real source, a database. */
export interface SeededSource {
  readonly accountId: string;
  readonly connectionId: string;
  readonly databaseId: string;
  readonly keySecret: Buffer;
}

/** A goal's own fields, by action (and `claimedAt`, once a reconciler took it). */
type GoalFields = {
  buildId?: string;
  instanceSize?: string;
  replicas?: number;
  claimedAt?: string;
};

/** A goal of `action` as the API records it (with the action's own fields in `extra`). */
export function goal(action: Goal['action'], fromStatus: string, extra: GoalFields = {}): Goal {
  return { action, fromStatus, requestedAt: new Date().toISOString(), ...extra } as Goal;
}

/**
 * A database on the MariaDB database at `sourceUrl` with a provision goal, as the API records
 * one (status `building`).
 */
export async function seedProvision(
  db: Kysely<Store>,
  secrets: SecretBox,
  sourceUrl: string,
  options: { sourceSchema?: string; syncMode?: string; replicas?: number } = {},
): Promise<SeededSource> {
  const store = { context: { db, secrets } };
  const accountId = await insertAccount(store, 'business');
  const owner = { accountId };
  const connectionId = await insertConnection(store, owner, sourceFromUrl(sourceUrl));
  const { id: databaseId, keySecret } = await insertDatabase(store, owner, {
    connectionId,
    sourceSchema: options.sourceSchema ?? new URL(sourceUrl).pathname.slice(1),
    syncMode: options.syncMode,
    ...(options.replicas !== undefined ? { replicas: options.replicas } : {}),
    status: 'building',
    goal: goal('provision', 'draft'),
  });
  return { accountId, connectionId, databaseId, keySecret };
}

/** Records an action the way the API does: the goal and the transitional status together. */
export async function requestAction(
  db: Kysely<Store>,
  databaseId: string,
  action: string,
  status: string,
  extra: GoalFields = {},
): Promise<void> {
  const row = await db
    .selectFrom('databases')
    .select('status')
    .where('id', '=', databaseId)
    .executeTakeFirstOrThrow();
  await db
    .updateTable('databases')
    .set({
      goal: JSON.stringify(goal(action as Goal['action'], row.status, extra)),
      status,
      updated_at: new Date(),
    })
    .where('id', '=', databaseId)
    .execute();
}

/** Adds an API key to the database the way the API does (bumping keys_version). */
export async function addApiKey(
  db: Kysely<Store>,
  seeded: SeededSource,
  keyId = newKeyId(),
): Promise<string> {
  await db
    .insertInto('api_keys')
    .values({
      id: randomUUID(),
      database_id: seeded.databaseId,
      account_id: seeded.accountId,
      key_id: keyId,
      name: 'test',
    })
    .execute();
  await bumpKeysVersion(db, seeded.databaseId);
  return keyId;
}

export async function bumpKeysVersion(db: Kysely<Store>, databaseId: string): Promise<void> {
  await db
    .updateTable('databases')
    .set((eb) => ({ keys_version: eb('keys_version', '+', 1) }))
    .where('id', '=', databaseId)
    .execute();
}

export async function databaseRow(db: Kysely<Store>, databaseId: string) {
  return db
    .selectFrom('databases')
    .selectAll()
    .where('id', '=', databaseId)
    .executeTakeFirstOrThrow();
}

/** The database's instances not removed (the serving one and a deploy's standby). */
export const liveInstances = liveInstancesOf;

export async function auditTypes(db: Kysely<Store>, databaseId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('audit_events')
    .select('event_type')
    .where('database_id', '=', databaseId)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => row.event_type);
}

/** Thrown by a check to stop waiting at once (the awaited state can no longer come). */
export class Hopeless extends Error {}

/** Polls until `check` returns a value (not undefined/false), or fails after the timeout. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  what = 'the condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (error instanceof Hopeless) throw error;
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the database's status is `status` (and no goal is left) and returns the row. */
export function statusReached(
  db: Kysely<Store>,
  databaseId: string,
  status: string,
  timeoutMs = 90_000,
) {
  return eventually(
    async () => {
      const row = await databaseRow(db, databaseId);
      if (row.status === 'failed' && status !== 'failed')
        throw new Hopeless(`the database failed: ${row.last_error}`);
      return row.status === status && row.goal === null ? row : undefined;
    },
    timeoutMs,
    `status ${status}`,
  );
}

/** Instance processes running under a data folder. */
export function instanceProcesses(dataDir: string): number[] {
  return processesUnder(join(dataDir, 'instances'));
}

/** Kills whatever instance processes a test left under the data folder. */
export function killInstanceProcesses(dataDir: string): void {
  for (const pid of instanceProcesses(dataDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}
