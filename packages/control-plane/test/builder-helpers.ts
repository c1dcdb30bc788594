import { expect } from 'vitest';
import type { TestControlPlane } from './control-plane-harness.ts';
import { insertConnection, insertDatabase, sourceFromUrl } from './lifecycle-fixtures.ts';
import { databaseRow } from './reconciler-fixtures.ts';

/**
 * A connection to the database at `sourceUrl` (a harness database) and a database on it
 * (status building) with the given schema config, inserted straight into the store; its row.
 */
export async function testSourceDatabase(
  cp: TestControlPlane,
  accountId: string,
  sourceUrl: string,
  schemaConfig: Record<string, unknown> = {},
) {
  const owner = { accountId };
  const { id } = await insertDatabase(cp, owner, {
    connectionId: await insertConnection(cp, owner, sourceFromUrl(sourceUrl)),
    name: 'shop',
    sourceSchema: new URL(sourceUrl).pathname.slice(1),
    schemaConfig,
    status: 'building',
    syncMode: 'poll',
    syncInterval: 2,
  });
  return databaseRow(cp.context.db, id);
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
