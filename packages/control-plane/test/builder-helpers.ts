import { randomUUID } from 'node:crypto';
import { newKeySecret } from '@replix/instance';
import { expect } from 'vitest';
import type { TestControlPlane } from './control-plane-harness.ts';

/**
 * A token for a fresh account and the account's id: its first request makes it, or, in a
 * control plane without the api role, a row inserted straight into the store.
 */
export async function testAccount(cp: TestControlPlane, email: string) {
  const token = await cp.token(email);
  if (!cp.url) {
    const accountId = randomUUID();
    await cp.context.db
      .insertInto('accounts')
      .values({ id: accountId, email, plan: 'free' })
      .execute();
    return { token, accountId };
  }
  await cp.request('GET', '/v1/management-keys', { token });
  const { account_id: accountId } = await cp.context.db
    .selectFrom('users')
    .select('account_id')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  return { token, accountId };
}

/**
 * A connection to the MariaDB database at `sourceUrl` (a harness database) and a database on
 * it with the given schema config, inserted straight into the store.
 */
export async function testSourceDatabase(
  cp: TestControlPlane,
  accountId: string,
  sourceUrl: string,
  schemaConfig: Record<string, unknown> = {},
) {
  const url = new URL(sourceUrl);
  const connectionId = randomUUID();
  const databaseId = randomUUID();
  await cp.context.db
    .insertInto('connections')
    .values({
      id: connectionId,
      account_id: accountId,
      name: 'source',
      backend: 'mysql',
      host: url.hostname,
      port: Number(url.port),
      username: decodeURIComponent(url.username),
      password_enc: cp.context.secrets.seal(decodeURIComponent(url.password)),
      default_region: 'eu-west-1',
      tls_mode: 'disable',
      ssh: null,
      ssh_private_key_enc: null,
    })
    .execute();
  const database = await cp.context.db
    .insertInto('databases')
    .values({
      id: databaseId,
      account_id: accountId,
      connection_id: connectionId,
      name: 'shop',
      source_schema: url.pathname.slice(1),
      schema_config: JSON.stringify(schemaConfig),
      region: 'eu-west-1',
      instance_size: 'xs',
      sync_mode: 'poll',
      sync_interval: 2,
      log_level: 'info',
      safety_net: 0,
      status: 'building',
      goal: null,
      key_secret_enc: cp.context.secrets.seal(newKeySecret()),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return database;
}

/** Waits until the build has finished and returns its row. */
export async function finishedBuild(cp: TestControlPlane, buildId: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await cp.context.db
      .selectFrom('builds')
      .selectAll()
      .where('id', '=', buildId)
      .executeTakeFirstOrThrow();
    if (row.status === 'succeeded' || row.status === 'failed') return row;
    expect(Date.now(), `build ${buildId} still ${row.status}`).toBeLessThan(deadline);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
