import { mariaDbAdmin, postgresAdmin, startDedicatedServer } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { describe, expect, it } from 'vitest';
import { json, startTestInstance } from './instance-helpers.ts';
import {
  createReplicationDatabase,
  type Engine,
  eventually,
  instanceRows,
  RandomWriter,
  replicationConfig,
  sourceRows,
} from './replication-harness.ts';

const engines: { engine: Engine; admin: () => ReturnType<typeof testMariaDb> }[] = [
  { engine: 'mariadb', admin: testMariaDb },
  { engine: 'postgres', admin: testPostgres },
];

const WRITE_MS = Number(process.env.REPLIX_CONVERGENCE_MS ?? 20_000);

describe.each(engines)('change data capture from $engine', ({ engine, admin }) => {
  it(`converges to the source exactly after ${WRITE_MS / 1000} s of random transactions`, {
    timeout: WRITE_MS + 60_000,
  }, async () => {
    const db = await createReplicationDatabase(admin(), engine);
    const writer = new RandomWriter(db, engine);
    for (let i = 0; i < 50; i++) await writer.transaction();
    const served = await startTestInstance(db.url, replicationConfig(engine), {
      replicationId: db.name,
    });
    try {
      let queries = 0;
      let reading = true;
      const reader = (async () => {
        while (reading) {
          const response = await served.query(
            'items { id name price } ORDER BY price DESC LIMIT 20',
          );
          expect(response.status).toBe(200);
          await response.text();
          queries += 1;
        }
      })();
      await writer.runFor(WRITE_MS);
      reading = false;
      await reader;
      await eventually(async () => {
        expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items'));
        expect(await instanceRows(served, 'live_items')).toEqual(
          await sourceRows(
            db,
            'live_items',
            engine === 'mariadb' ? 'WHERE active = 1' : 'WHERE active',
          ),
        );
      });
      expect(writer.transactions).toBeGreaterThan(100);
      expect(queries).toBeGreaterThan(10);
    } finally {
      await served.close();
    }
  });

  it('freezes the snapshot while paused and catches up after resume, losing nothing', async () => {
    const db = await createReplicationDatabase(admin(), engine);
    const writer = new RandomWriter(db, engine, 7);
    for (let i = 0; i < 20; i++) await writer.transaction();
    const served = await startTestInstance(db.url, replicationConfig(engine), {
      replicationId: db.name,
    });
    const auth = { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}` } };
    try {
      await eventually(async () =>
        expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
      );
      const frozen = await instanceRows(served, 'items');
      expect(await json(fetch(`${served.url}/replication/pause`, auth))).toEqual({
        replication_paused: true,
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const swapsBefore = (await json(served.query('items { id } LIMIT 1'))).meta.snapshot
        .swap_count;
      for (let i = 0; i < 30; i++) await writer.transaction();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await instanceRows(served, 'items')).toEqual(frozen);
      const paused = await json(served.query('items { id } LIMIT 1'));
      expect(paused.meta.snapshot.swap_count).toBe(swapsBefore);
      expect(paused.meta.snapshot.age_ms).toBeGreaterThanOrEqual(400);
      const detail = await json(fetch(`${served.url}/health/detail`, { headers: auth.headers }));
      expect(detail.replication).toMatchObject({ mode: 'cdc', paused: true, state: 'paused' });
      await fetch(`${served.url}/replication/resume`, auth);
      await eventually(async () => {
        expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items'));
        expect(await instanceRows(served, 'live_items')).toEqual(
          await sourceRows(
            db,
            'live_items',
            engine === 'mariadb' ? 'WHERE active = 1' : 'WHERE active',
          ),
        );
      });
    } finally {
      await served.close();
    }
  });

  it('counts a swap only when changes arrive, and keeps age low while in sync', async () => {
    const db = await createReplicationDatabase(admin(), engine);
    const served = await startTestInstance(db.url, replicationConfig(engine), {
      replicationId: db.name,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const idle = (await json(served.query('items { id }'))).meta.snapshot;
      expect(idle.swap_count).toBe(0);
      expect(idle.age_ms).toBeLessThan(1000);
      await db.exec(
        `INSERT INTO items VALUES (1, 1, 'a', 1.00, ${engine === 'mariadb' ? 1 : 'true'})`,
      );
      await eventually(async () =>
        expect((await json(served.query('items { id }'))).data).toEqual([{ id: 1 }]),
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect((await json(served.query('items { id }'))).meta.snapshot.swap_count).toBe(1);
    } finally {
      await served.close();
    }
  });
});

describe.each(['mariadb', 'postgres'] as const)('a %s source that restarts', (engine) => {
  it('reconnects, resumes from the last applied position and converges', {
    timeout: 90_000,
  }, async () => {
    const server = await startDedicatedServer(engine);
    try {
      const admin = engine === 'mariadb' ? mariaDbAdmin(server.url) : postgresAdmin(server.url);
      const db = await createReplicationDatabase(admin, engine);
      const writer = new RandomWriter(db, engine, 5);
      for (let i = 0; i < 20; i++) await writer.transaction();
      const served = await startTestInstance(db.url, replicationConfig(engine), {
        replicationId: db.name,
      });
      try {
        await eventually(async () =>
          expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
        );
        for (let i = 0; i < 20; i++) await writer.transaction();
        await server.restart({ crash: true });
        const detail = await json(
          fetch(`${served.url}/health/detail`, {
            headers: { Authorization: `Bearer ${served.adminKey}` },
          }),
        );
        expect(['ok', 'degraded']).toContain(detail.status);
        for (let i = 0; i < 20; i++) await writer.transaction();
        await eventually(async () => {
          expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items'));
          expect(await instanceRows(served, 'live_items')).toEqual(
            await sourceRows(
              db,
              'live_items',
              engine === 'mariadb' ? 'WHERE active = 1' : 'WHERE active',
            ),
          );
        }, 40_000);
        const after = await json(
          fetch(`${served.url}/health/detail`, {
            headers: { Authorization: `Bearer ${served.adminKey}` },
          }),
        );
        expect(after.status).toBe('ok');
        expect(after.replication.reconnects).toBeGreaterThanOrEqual(1);
        expect(after.reload.count).toBe(0);
      } finally {
        await served.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe.each(['mariadb', 'postgres'] as const)(
  'a %s source that lost the history the instance needs',
  (engine) => {
    // A server of its own: a binlog purge on the shared server would stop at files other tests'
    // streams still read.
    it('falls back to a full reload, says so, and converges', { timeout: 60_000 }, async () => {
      const server = await startDedicatedServer(engine);
      try {
        const admin = engine === 'mariadb' ? mariaDbAdmin(server.url) : postgresAdmin(server.url);
        const db = await createReplicationDatabase(admin, engine);
        const writer = new RandomWriter(db, engine, 11);
        for (let i = 0; i < 10; i++) await writer.transaction();
        const served = await startTestInstance(db.url, replicationConfig(engine), {
          replicationId: db.name,
        });
        const auth = { method: 'POST', headers: { Authorization: `Bearer ${served.adminKey}` } };
        try {
          await eventually(async () =>
            expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
          );
          await fetch(`${served.url}/replication/pause`, auth);
          await new Promise((resolve) => setTimeout(resolve, 300));
          for (let i = 0; i < 20; i++) await writer.transaction();
          if (engine === 'mariadb') {
            // The paused stream's dump thread lingers until the server next writes to it, and
            // MariaDB never purges a file a dump thread reads: end it, as a disconnection would.
            const dumps = await admin.query<{ ID: number }>(
              "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'",
            );
            for (const { ID } of dumps) await admin.exec(`KILL ${ID}`);
            await admin.exec('FLUSH BINARY LOGS');
            const [last] = (await admin.query<{ Log_name: string }>('SHOW BINARY LOGS')).slice(-1);
            // MariaDB keeps the previous file until its binlog checkpoint for InnoDB is written.
            await eventually(async () => {
              await admin.exec(`PURGE BINARY LOGS TO '${last?.Log_name}'`);
              expect(await admin.query('SHOW BINARY LOGS')).toHaveLength(1);
            }, 10_000);
          } else {
            await admin.exec(`SELECT pg_drop_replication_slot('replix_${db.name}')`);
          }
          await fetch(`${served.url}/replication/resume`, auth);
          await eventually(async () => {
            expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items'));
            const detail = await json(
              fetch(`${served.url}/health/detail`, { headers: auth.headers }),
            );
            expect(detail.reload).toMatchObject({ count: 1, last_reason: 'position_expired' });
          });
          for (let i = 0; i < 10; i++) await writer.transaction();
          await eventually(async () =>
            expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
          );
          const detail = await json(
            fetch(`${served.url}/health/detail`, { headers: auth.headers }),
          );
          expect(detail.status).toBe('ok');
        } finally {
          await served.close();
        }
      } finally {
        await server.stop();
      }
    });
  },
);

describe.each(engines)('poll mode and schema changes on $engine', ({ engine, admin }) => {
  const bool = (value: boolean) => (engine === 'mariadb' ? (value ? '1' : '0') : String(value));

  it('re-reads the source every interval in full poll mode', async () => {
    const db = await createReplicationDatabase(admin(), engine);
    await db.exec(`INSERT INTO items VALUES (1, 1, 'a', 1.00, ${bool(true)})`);
    const served = await startTestInstance(db.url, { sync: { mode: 'poll', interval: 0.2 } });
    try {
      expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items'));
      // Polls that find nothing changed swap nothing, yet keep the snapshot's age low.
      await new Promise((resolve) => setTimeout(resolve, 700));
      const idle = (await json(served.query('items { id }'))).meta.snapshot;
      expect(idle.swap_count).toBe(0);
      expect(idle.age_ms).toBeLessThan(600);
      await db.exec(
        `INSERT INTO items VALUES (2, 1, 'b', 2.00, ${bool(false)}); DELETE FROM items WHERE id = 1`,
      );
      await eventually(async () =>
        expect(await instanceRows(served, 'items')).toEqual(await sourceRows(db, 'items')),
      );
      expect(
        (await json(served.query('items { id }'))).meta.snapshot.swap_count,
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await served.close();
    }
  });

  it('reads only rows above the change column in incremental poll mode', async () => {
    const db = await admin().createDatabase(
      "CREATE TABLE events (id INT PRIMARY KEY, label VARCHAR(20), version INT NOT NULL); INSERT INTO events VALUES (1, 'a', 1), (2, 'b', 2);",
    );
    const served = await startTestInstance(db.url, {
      sync: { mode: 'poll', interval: 0.2, change_column: 'version' },
    });
    try {
      await db.exec(
        "UPDATE events SET label = 'B', version = 3 WHERE id = 2; INSERT INTO events VALUES (3, 'c', 4)",
      );
      await eventually(async () =>
        expect((await json(served.query('events { id label } ORDER BY id'))).data).toEqual([
          { id: 1, label: 'a' },
          { id: 2, label: 'B' },
          { id: 3, label: 'c' },
        ]),
      );
      // A change that does not raise the change column is not seen: that is the mode's contract.
      await db.exec("UPDATE events SET label = 'unseen' WHERE id = 1");
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect((await json(served.query('events (id = 1) { label }'))).data).toEqual([
        { label: 'a' },
      ]);
    } finally {
      await served.close();
    }
  });

  it('keeps serving and reports a followed table whose columns changed at the source', async () => {
    const db = await createReplicationDatabase(admin(), engine);
    await db.exec(`INSERT INTO items VALUES (1, 1, 'a', 1.00, ${bool(true)})`);
    const served = await startTestInstance(db.url, replicationConfig(engine), {
      replicationId: db.name,
    });
    try {
      await db.exec('ALTER TABLE items DROP COLUMN name');
      await db.exec(`INSERT INTO items VALUES (2, 1, 2.00, ${bool(true)})`);
      await db.exec(`INSERT INTO live_items VALUES (9, 'z', ${bool(true)})`);
      await eventually(async () =>
        expect((await json(served.query('live_items { id }'))).data).toEqual([{ id: 9 }]),
      );
      const detail = await json(
        fetch(`${served.url}/health/detail`, {
          headers: { Authorization: `Bearer ${served.adminKey}` },
        }),
      );
      expect(detail.replication.schema_changes).toEqual([
        { table: 'items', detail: expect.any(String) },
      ]);
      expect((await json(served.query('items { id name }'))).data).toEqual([{ id: 1, name: 'a' }]);
    } finally {
      await served.close();
    }
  });
});

describe('safety net and memory cap under change data capture', () => {
  it('reloads on the safety-net period', async () => {
    const db = await createReplicationDatabase(testMariaDb(), 'mariadb');
    const served = await startTestInstance(
      db.url,
      replicationConfig('mariadb', { sync: { mode: 'cdc', interval: 0.1, safety_net: 0.3 } }),
      {
        replicationId: db.name,
      },
    );
    try {
      await eventually(async () => {
        const detail = await json(
          fetch(`${served.url}/health/detail`, {
            headers: { Authorization: `Bearer ${served.adminKey}` },
          }),
        );
        expect(detail.reload.count).toBeGreaterThanOrEqual(1);
        expect(detail.reload.last_reason).toBe('safety_net');
      });
    } finally {
      await served.close();
    }
  });

  it('keeps the last good generation when changes would break the memory cap', async () => {
    const db = await createReplicationDatabase(testMariaDb(), 'mariadb');
    await db.exec("INSERT INTO items VALUES (1, 1, 'a', 1.00, 1)");
    const served = await startTestInstance(
      db.url,
      replicationConfig('mariadb', { memory_cap_mb: 0.05 }),
      { replicationId: db.name },
    );
    try {
      expect(await json(fetch(`${served.url}/health`))).toEqual({ status: 'ok' });
      const values = Array.from(
        { length: 3000 },
        (_, i) => `(${i + 2}, 1, '${'x'.repeat(40)}', 1.00, 1)`,
      ).join(',');
      await db.exec(`INSERT INTO items VALUES ${values}`);
      await eventually(async () =>
        expect(await json(fetch(`${served.url}/health`))).toEqual({ status: 'cap_exceeded' }),
      );
      expect((await json(served.query('items { id }'))).data).toEqual([{ id: 1 }]);
      const reload = await fetch(`${served.url}/reload`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${served.adminKey}` },
      });
      expect(reload.status).toBe(409);
      expect((await json(reload)).error.code).toBe('cap_degraded');
    } finally {
      await served.close();
    }
  });
});
