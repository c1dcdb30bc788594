import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestDatabase } from '@replix/testkit';
import { mariaDbAdmin, postgresAdmin, startDedicatedServer } from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { json } from '../../instance/test/instance-helpers.ts';
import {
  createReplicationDatabase,
  type Engine,
  eventually,
  RandomWriter,
  replicationConfig,
  sourceRows,
} from '../../instance/test/replication-harness.ts';
import { type ServeProcess, serveProcess } from './serve-process.ts';

const SERVED = ['items', 'live_items'] as const;
/** Rows loaded before the first start: a full read of a table reads at least this many. */
const BULK_ROWS = 3000;

const folders: string[] = [];
/** Every instance started: one a failed test left running is killed after it. */
const started: ServeProcess[] = [];
afterEach(async () => {
  for (const serve of started.splice(0)) await serve.kill();
});
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Rows each served table gave up to reads so far, as the source counts them. */
async function rowsRead(db: TestDatabase, engine: Engine): Promise<Record<string, number>> {
  const rows =
    engine === 'postgres'
      ? await db.query<{ table: string; read: string }>(
          'SELECT relname AS table, seq_tup_read AS read FROM pg_stat_user_tables',
        )
      : await db.query<{ table: string; read: string }>(
          'SELECT TABLE_NAME AS `table`, ROWS_READ AS `read` FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = DATABASE()',
        );
  return Object.fromEntries(
    SERVED.map((t) => [t, Number(rows.find((r) => r.table === t)?.read ?? 0)]),
  );
}

async function bulkRows(db: TestDatabase, engine: Engine): Promise<void> {
  const values = Array.from(
    { length: BULK_ROWS },
    (_, i) =>
      `(${1_000_000 + i}, ${i % 7}, 'bulk${i}', ${i}.25, ${engine === 'mariadb' ? 1 : 'true'})`,
  );
  await db.exec(`INSERT INTO items (id, grp, name, price, active) VALUES ${values.join(', ')}`);
  await db.exec(
    `INSERT INTO live_items (id, name, active) SELECT id, name, active FROM items WHERE id >= 1000000`,
  );
}

/** An empty checkpoint folder and a schema config file, removed after the tests. */
function checkpointSetup(engine: Engine): { dir: string; configFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'replix-checkpoints-'));
  const configFile = `${dir}-config.json`;
  writeFileSync(configFile, JSON.stringify(replicationConfig(engine)));
  folders.push(dir, configFile);
  return { dir, configFile };
}

interface Started {
  readonly serve: ServeProcess;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read arbitrary JSON
  detail(): Promise<Record<string, any>>;
  rows(table: string): Promise<unknown[]>;
}

async function start(db: TestDatabase, configFile: string, dir: string): Promise<Started> {
  const serve = await serveProcess(
    ['--source', db.url, '--config', configFile, '--checkpoint-dir', dir, '--log-level', 'info'],
    { ...process.env, REPLIX_CHECKPOINT_INTERVAL: '1' },
  );
  started.push(serve);
  const { url, apiKey, adminKey } = serve.ready as Record<string, string>;
  return {
    serve,
    detail: () =>
      json(fetch(`${url}/health/detail`, { headers: { Authorization: `Bearer ${adminKey}` } })),
    async rows(table) {
      const body = await json(
        fetch(`${url}/query`, {
          method: 'POST',
          body: `${table} { * } ORDER BY id LIMIT 1000000`,
          headers: { Authorization: `Bearer ${apiKey}` },
        }),
      );
      if (!body.data) throw new Error(`query failed: ${JSON.stringify(body)}`);
      return body.data;
    },
  };
}

async function converged(db: TestDatabase, engine: Engine, served: Started): Promise<void> {
  await eventually(async () => {
    expect(await served.rows('items')).toEqual(await sourceRows(db, 'items'));
    expect(await served.rows('live_items')).toEqual(
      await sourceRows(
        db,
        'live_items',
        engine === 'mariadb' ? 'WHERE active = 1' : 'WHERE active',
      ),
    );
  }, 30_000);
}

const engines = [
  { engine: 'mariadb' as const, admin: testMariaDb },
  { engine: 'postgres' as const, admin: testPostgres },
];

describe.each(engines)('checkpoints on $engine', ({ engine, admin }) => {
  it('reads the source once: a crash and a planned stop both start from a checkpoint', {
    timeout: 120_000,
  }, async () => {
    if (engine === 'mariadb') await admin().exec('SET GLOBAL userstat = 1');
    const db = await createReplicationDatabase(admin(), engine);
    await bulkRows(db, engine);
    const writer = new RandomWriter(db, engine, 29);
    for (let i = 0; i < 30; i++) await writer.transaction();
    const { dir, configFile } = checkpointSetup(engine);

    /**
     * Starts an instance; what each served table gave up to reads meanwhile (the test's own
     * reads, which read whole tables to compare, come after). The snapshot reader's session
     * ends with the load, and the source counts a session's reads in by then.
     */
    const startCounted = async () => {
      const before = await rowsRead(db, engine);
      const served = await start(db, configFile, dir);
      const after = await rowsRead(db, engine);
      const read = Object.fromEntries(
        SERVED.map((table) => [table, (after[table] ?? 0) - (before[table] ?? 0)]),
      );
      return { served, read };
    };
    const fromCheckpoint = async () => {
      const { served, read } = await startCounted();
      expect((await served.detail()).snapshot.origin).toBe('checkpoint');
      // No served table read whole: what each gave up is a fraction of it.
      for (const table of SERVED) expect(read[table]).toBeLessThan(BULK_ROWS / 2);
      return served;
    };

    // The first start reads the source, and checkpoints what it read at once.
    const { served: first, read: firstRead } = await startCounted();
    for (const table of SERVED) expect(firstRead[table]).toBeGreaterThanOrEqual(BULK_ROWS);
    await converged(db, engine, first);
    await eventually(async () => {
      const detail = await first.detail();
      expect(detail.snapshot.origin).toBe('source');
      expect(detail.snapshot.checkpoints.written).toBeGreaterThanOrEqual(1);
    });
    await writer.runFor(1500);
    await converged(db, engine, first);
    // A checkpoint past the first one, then no checkpoint can be left half-written by the kill.
    await eventually(async () =>
      expect((await first.detail()).snapshot.checkpoints.written).toBeGreaterThanOrEqual(2),
    );

    // kill -9: no checkpoint at stop; the next start replays from the newest one.
    await first.serve.kill();
    await writer.runFor(500);
    const second = await fromCheckpoint();
    const detail = await second.detail();
    expect(detail.snapshot.checkpoint.position).toEqual(expect.any(String));
    expect(detail.snapshot.checkpoint.age_ms).toBeGreaterThanOrEqual(0);
    await converged(db, engine, second);
    await writer.runFor(1000);
    await converged(db, engine, second);
    // A planned stop checkpoints what is served.
    expect(await second.serve.stop()).toBe(0);
    expect(second.serve.stderr()).toContain('starting from a checkpoint');

    await writer.runFor(500);
    const third = await fromCheckpoint();
    await converged(db, engine, third);
    expect(await third.serve.stop()).toBe(0);

    // No served table was read whole again: what each gave up since is a fraction of it.
    // A damaged newest checkpoint is never served: the start falls back to the one before it.
    const names = readdirSync(dir).sort();
    expect(names).toHaveLength(2);
    const newest = join(dir, names[1] as string, 'buffers.bin');
    const bytes = readFileSync(newest);
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(newest, bytes);
    const fourth = await fromCheckpoint();
    expect((await fourth.detail()).snapshot.checkpoint.name).toBe(names[0]);
    await converged(db, engine, fourth);
    expect(await fourth.serve.stop()).toBe(0);
    expect(fourth.serve.stderr()).toMatch(/"problem":"damaged".*checkpoint not used/);

    // A served table with another column: what a checkpoint holds is not what to serve now.
    await db.exec('ALTER TABLE items ADD COLUMN extra INT NULL');
    const { served: fifth, read: fifthRead } = await startCounted();
    expect((await fifth.detail()).snapshot.origin).toBe('source');
    for (const table of SERVED) expect(fifthRead[table]).toBeGreaterThanOrEqual(BULK_ROWS);
    await converged(db, engine, fifth);
    expect(await fifth.serve.stop()).toBe(0);
    expect(fifth.serve.stderr()).toMatch(/"problem":"fingerprint".*checkpoint not used/);
  });

  // A server of its own: a binlog purge on the shared server would stop at files other tests'
  // streams still read.
  it('reads the source again when the history after the checkpoint is gone', {
    timeout: 90_000,
  }, async () => {
    const server = await startDedicatedServer(engine);
    try {
      const serverAdmin =
        engine === 'mariadb' ? mariaDbAdmin(server.url) : postgresAdmin(server.url);
      const db = await createReplicationDatabase(serverAdmin, engine);
      const writer = new RandomWriter(db, engine, 31);
      for (let i = 0; i < 20; i++) await writer.transaction();
      const { dir, configFile } = checkpointSetup(engine);
      const first = await start(db, configFile, dir);
      await converged(db, engine, first);
      await eventually(async () =>
        expect((await first.detail()).snapshot.checkpoints.written).toBeGreaterThanOrEqual(1),
      );
      expect(await first.serve.stop()).toBe(0);
      for (let i = 0; i < 20; i++) await writer.transaction();
      if (engine === 'mariadb') {
        await serverAdmin.exec('FLUSH BINARY LOGS');
        const [last] = (await serverAdmin.query<{ Log_name: string }>('SHOW BINARY LOGS')).slice(
          -1,
        );
        // MariaDB keeps the previous file until its binlog checkpoint for InnoDB is written.
        await eventually(async () => {
          await serverAdmin.exec(`PURGE BINARY LOGS TO '${last?.Log_name}'`);
          expect(await serverAdmin.query('SHOW BINARY LOGS')).toHaveLength(1);
        }, 10_000);
      } else {
        const slots = `FROM pg_replication_slots WHERE database = '${db.name}'`;
        await serverAdmin.exec(`SELECT pg_drop_replication_slot(slot_name) ${slots}`);
        expect(await serverAdmin.query(`SELECT slot_name ${slots}`)).toEqual([]);
      }
      const second = await start(db, configFile, dir);
      await converged(db, engine, second);
      await eventually(async () => {
        const detail = await second.detail();
        expect(detail.reload).toMatchObject({ count: 1, last_reason: 'position_expired' });
        expect(detail.snapshot.origin).toBe('source');
      });
      for (let i = 0; i < 10; i++) await writer.transaction();
      await converged(db, engine, second);
      expect((await second.detail()).status).toBe('ok');
      expect(await second.serve.stop()).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
