import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  mariaDbAdmin,
  postgresAdmin,
  startDedicatedServer,
  type TestDatabase,
} from '@replix/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';
import {
  createReplicationDatabase,
  type Engine,
  eventually,
  RandomWriter,
  replicationConfig,
  sourceRows,
} from './replication-harness.ts';

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

const detailOf = (served: TestInstance) =>
  json(
    fetch(`${served.url}/health/detail`, {
      headers: { Authorization: `Bearer ${served.adminKey}` },
    }),
  );

/** What a replica serves of `items`, with the generation and swap count it was served at. */
async function servedItems(served: TestInstance) {
  const body = await served.json('items { * } ORDER BY id LIMIT 1000000');
  const snapshot = (body.meta as Record<string, Record<string, number>>).snapshot;
  return { rows: body.data, generation: snapshot?.generation, swapCount: snapshot?.swap_count };
}

/** The source's change-capture clients of `db`: PostgreSQL slots, or MariaDB binlog dumps. */
async function captureClients(db: TestDatabase, engine: Engine): Promise<number> {
  if (engine === 'postgres') {
    const rows = await db.query<{ slots: string; publications: string }>(
      `SELECT (SELECT count(*) FROM pg_replication_slots WHERE database = current_database()) AS slots,
        (SELECT count(*) FROM pg_publication) AS publications`,
    );
    // One slot and the one publication it reads.
    expect(Number(rows[0]?.publications)).toBe(Number(rows[0]?.slots));
    return Number(rows[0]?.slots);
  }
  const rows = await db.query<{ count: string }>(
    "SELECT count(*) AS count FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
  );
  return Number(rows[0]?.count);
}

// A server of its own: capture clients are counted server-wide, where other tests' come and go.
describe.each(['postgres', 'mariadb'] as const)(
  'replicas that follow one stream on %s',
  (engine) => {
    it('serve the leader’s generations, hold one capture client, and outlive the leader', {
      timeout: 90_000,
    }, async () => {
      const server = await startDedicatedServer(engine);
      const admin = engine === 'mariadb' ? mariaDbAdmin(server.url) : postgresAdmin(server.url);
      const db = await createReplicationDatabase(admin, engine);
      const writer = new RandomWriter(db, engine, 41);
      for (let i = 0; i < 30; i++) await writer.transaction();
      const dir = mkdtempSync(join(tmpdir(), 'replix-followers-'));
      folders.push(dir);
      const checkpoints = { dir, schedule: { intervalMs: 1000, changes: 200 } };
      const config = replicationConfig(engine);
      let leader = await startTestInstance(db.url, config, {
        replicationId: db.name,
        checkpoints,
        changeFeed: true,
      });
      const followers: TestInstance[] = [];
      try {
        for (let k = 1; k <= 2; k++) {
          followers.push(
            await startTestInstance(db.url, config, {
              checkpoints,
              followUrl: leader.url,
              sameKeysAs: leader,
            }),
          );
        }
        const converged = async () => {
          const source = await sourceRows(db, 'items');
          const led = await servedItems(leader);
          expect(led.rows).toEqual(source);
          for (const follower of followers) {
            const followed = await servedItems(follower);
            expect(followed.rows).toEqual(source);
            // The same generation, made the same way, counted the same.
            expect([followed.generation, followed.swapCount]).toEqual([
              led.generation,
              led.swapCount,
            ]);
          }
        };
        await writer.runFor(3000);
        await eventually(converged, 20_000);
        // Replicas cost the source nothing: one slot (or binlog client) for all three.
        expect(await captureClients(db, engine)).toBe(1);
        for (const follower of followers) {
          const detail = await detailOf(follower);
          expect(detail.replication).toMatchObject({ role: 'follower', state: 'following' });
          expect(detail.snapshot.origin).toBe('checkpoint');
        }
        // A follower's reload starts over from the leader's line: it never reads the source.
        const first = followers[0] as TestInstance;
        const restarts = (await detailOf(first)).replication.restarts;
        const reload = await fetch(`${first.url}/reload`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${first.adminKey}` },
        });
        expect(reload.status).toBe(202);
        await writer.runFor(500);
        await eventually(async () => {
          expect((await detailOf(first)).replication.restarts).toBe(restarts + 1);
          await converged();
        }, 20_000);

        // The leader gone, followers keep serving what they have, and say why.
        const frozen = await servedItems(followers[0] as TestInstance);
        await leader.close();
        await writer.runFor(500);
        await eventually(async () => {
          const detail = await detailOf(followers[0] as TestInstance);
          expect(detail.status).toBe('degraded');
          expect(detail.degraded_reason).toMatch(/leader replica cannot be reached/);
        });
        expect((await servedItems(followers[0] as TestInstance)).rows).toEqual(frozen.rows);

        // A new leader on the same address: the followers start over from its line and converge.
        leader = await startTestInstance(db.url, config, {
          replicationId: db.name,
          checkpoints,
          changeFeed: true,
          sameKeysAs: leader,
          port: Number(new URL(leader.url).port),
        });
        await writer.runFor(1000);
        await eventually(converged, 30_000);
        expect(await captureClients(db, engine)).toBe(1);
      } finally {
        for (const follower of followers) await follower.close();
        await leader.close();
        await server.stop();
      }
    });
  },
);
