import type { SourceTable } from '@replix/engine';
import type { TestDatabase } from '@replix/testkit';
import { mulberry32 as random } from '@replix/testkit/mulberry32';
import { testPostgres } from '@replix/testkit/vitest';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PositionExpiredError,
  ReplicationError,
  SourceConnectionError,
  SourceError,
} from '../src/errors.ts';
import type { PostgresConnector } from '../src/postgres/postgres-connector.ts';
import { Lsn } from '../src/postgres/postgres-position.ts';
import type { ChangeBatch, ReplicationPosition, SourceChange } from '../src/replication.ts';
import {
  atLeast,
  postgresConnector,
  slotRow,
  tableNamed,
  takeChanges,
} from './postgres-cdc-helpers.ts';

const admin = testPostgres();

async function rejection(work: Promise<unknown>): Promise<SourceError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof SourceError) return error;
    throw error;
  }
  throw new Error('expected a SourceError');
}

async function readRows(connector: PostgresConnector, table: SourceTable): Promise<unknown[][]> {
  const reader = await connector.openSnapshot();
  try {
    const rows: unknown[][] = [];
    for await (const batch of reader.readTable({ table: table.name, columns: table.columns })) {
      rows.push(...batch);
    }
    return rows;
  } finally {
    await reader.close();
  }
}

function streamOf(
  connector: PostgresConnector,
  tables: readonly SourceTable[],
  from: ReplicationPosition,
  signal: AbortSignal,
): AsyncIterable<ChangeBatch> {
  return connector.streamChanges({
    tables: tables.map((table) => ({ table: table.name, columns: table.columns })),
    from,
    signal,
  });
}

/** The next batch with changes: batches that only move the position over other WAL are skipped. */
async function nextChanges(stream: AsyncIterator<ChangeBatch>): Promise<ChangeBatch> {
  for (;;) {
    const result = await stream.next();
    if (result.done) throw new Error('the stream ended');
    if (result.value.changes.length > 0) return result.value;
  }
}

/** Consumes a stream in the background; resolves with its batch count when iteration ends. */
async function drain(stream: AsyncIterable<ChangeBatch>): Promise<number> {
  let count = 0;
  for await (const _ of stream) count++;
  return count;
}

/** Small transactions of inserts, updates (some of the key) and deletes until stopped. */
async function writeUntil(url: string, seed: number, stopped: () => boolean): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const next = random(seed);
  let transactions = 0;
  try {
    while (!stopped()) {
      const id = 1 + Math.floor(next() * 60);
      const other = 1 + Math.floor(next() * 60);
      const step = Math.floor(next() * 4);
      await client.query('BEGIN');
      try {
        await writeStep(client, step, id, other);
      } catch (error) {
        // The two writers lock rows in either order: PostgreSQL ends one of a deadlocked pair,
        // whose transaction then never happened (and must not be streamed).
        if ((error as { code?: string }).code !== DEADLOCK_DETECTED) throw error;
        await client.query('ROLLBACK');
        continue;
      }
      await client.query('COMMIT');
      transactions++;
    }
  } finally {
    await client.end();
  }
  return transactions;
}

const DEADLOCK_DETECTED = '40P01';

/** One transaction's statements: an upsert, an update and insert, a delete, or a key move. */
async function writeStep(client: pg.Client, step: number, id: number, other: number) {
  if (step === 0) {
    await client.query(
      'INSERT INTO counter VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET n = counter.n + 1',
      [id],
    );
  } else if (step === 1) {
    await client.query('UPDATE counter SET n = n + 10 WHERE id = $1', [id]);
    await client.query('INSERT INTO counter VALUES ($1, 0) ON CONFLICT DO NOTHING', [other]);
  } else if (step === 2) {
    await client.query('DELETE FROM counter WHERE id = $1', [id]);
  } else {
    // Moves a row to a free key: the stream must carry the old key.
    await client.query(
      'UPDATE counter SET id = $2 WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM counter WHERE id = $2)',
      [id, 1000 + id * 100 + other],
    );
  }
}

describe('PostgreSQL change data capture', () => {
  let db: TestDatabase;
  let connector: PostgresConnector;
  let tables: readonly SourceTable[];

  beforeAll(async () => {
    db = await admin.createDatabase(`
      CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL);
      INSERT INTO counter SELECT n, 0 FROM generate_series(1, 30) AS n;
      CREATE TABLE marker (id int PRIMARY KEY);
      CREATE TABLE other (id int PRIMARY KEY);
      CREATE TABLE no_key (note text);
    `);
    connector = postgresConnector(db);
    tables = (await connector.introspect()).tables.filter((table) => table.name !== 'no_key');
  });

  afterAll(async () => {
    await connector?.dropReplication();
    await connector?.close();
    await db?.drop();
  });

  it('delivers every change committed after the snapshot exactly once, none before', async () => {
    let stopped = false;
    const writers = [1, 2].map((seed) => writeUntil(db.url, seed, () => stopped));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const reader = await connector.openSnapshot({
      withPosition: true,
      tables: ['counter', 'marker'],
    });
    const counter = tableNamed(tables, 'counter');
    const state = new Map<unknown, readonly unknown[]>();
    try {
      expect(reader.position).toBeInstanceOf(Lsn);
      for await (const batch of reader.readTable({ table: 'counter', columns: counter.columns })) {
        for (const row of batch) state.set(row[0], row);
      }
    } finally {
      await reader.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    stopped = true;
    const transactions = (await Promise.all(writers)).reduce((a, b) => a + b, 0);
    expect(transactions).toBeGreaterThan(20);
    await db.exec('INSERT INTO marker VALUES (1)');

    const followed = [counter, tableNamed(tables, 'marker')];
    const taken = await takeChanges(connector, followed, reader.position!, (changes) =>
      changes.some((change) => change.op === 'insert' && change.table === 'marker'),
    );
    // Applied strictly: an insert of a present key, or an update or delete of an absent one,
    // would mean a change already in the snapshot came again, or one came twice.
    for (const change of taken.changes) {
      if (change.table !== 'counter') continue;
      if (change.op === 'insert') {
        expect(state.has(change.row[0]), `insert of ${change.row[0]}`).toBe(false);
        state.set(change.row[0], change.row);
      } else if (change.op === 'update') {
        const key = (change.before ?? change.after)[0];
        expect(state.has(key), `update of ${key}`).toBe(true);
        state.delete(key);
        state.set(change.after[0], change.after);
      } else if (change.op === 'delete') {
        expect(state.delete(change.row[0]), `delete of ${change.row[0]}`).toBe(true);
      } else {
        throw new Error(`unexpected ${change.op}`);
      }
    }
    const expected = await readRows(connector, counter);
    const byId = (a: readonly unknown[], b: readonly unknown[]) => Number(a[0]) - Number(b[0]);
    expect([...state.values()].sort(byId)).toEqual(expected.sort(byId));
    // Batches are whole transactions in commit order, positions strictly rising.
    for (let i = 1; i < taken.batches.length; i++) {
      expect(taken.batches[i]!.position.compare(taken.batches[i - 1]!.position)).toBe(1);
    }
    expect(taken.batches[0]!.position.compare(reader.position!)).toBe(1);
  });

  it('acknowledges positions into confirmed_flush_lsn and resumes after them', async () => {
    const name = connector.replicationName;
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    const start = reader.position!;
    const followed = [tableNamed(tables, 'other')];
    const confirmed = async () => Lsn.parse((await slotRow(admin, name))!.confirmed_flush_lsn);

    await db.exec('INSERT INTO other VALUES (1)');
    const first = await takeChanges(connector, followed, start, atLeast(1));
    await db.exec('INSERT INTO other VALUES (2)');
    await db.exec('INSERT INTO other VALUES (3)');
    const ids = (changes: readonly SourceChange[]) =>
      changes.map((change) => (change.op === 'insert' ? change.row[0] : change.op));

    // From the snapshot's position nothing is confirmed yet: all three.
    expect(ids((await takeChanges(connector, followed, start, atLeast(3))).changes)).toEqual([
      1, 2, 3,
    ]);
    // From the first batch's position: only what came after it.
    const resumed = await takeChanges(connector, followed, first.position, atLeast(2));
    expect(ids(resumed.changes)).toEqual([2, 3]);

    // Acknowledged through the running stream: the slot confirms it while the stream runs.
    const controller = new AbortController();
    const stream = streamOf(connector, followed, start, controller.signal)[Symbol.asyncIterator]();
    try {
      // Running, having sent changes past the first batch: then the acknowledgement goes out.
      await nextChanges(stream);
      expect((await confirmed()).compare(first.position)).toBe(-1);
      await connector.acknowledge(first.position);
      await expect.poll(async () => (await confirmed()).compare(first.position)).toBe(0);
    } finally {
      controller.abort();
      await stream.return?.();
    }
    // PostgreSQL would start a stream from before the confirmed position at the confirmed one,
    // skipping what lies between: that is a lost history (a checkpoint older than the slot).
    await expect(takeChanges(connector, followed, start, atLeast(1))).rejects.toBeInstanceOf(
      PositionExpiredError,
    );
    // From the confirmed position itself: what came after it.
    expect(
      ids((await takeChanges(connector, followed, first.position, atLeast(2))).changes),
    ).toEqual([2, 3]);

    // With no stream running, acknowledging advances the slot by SQL.
    await connector.acknowledge(resumed.position);
    expect((await confirmed()).compare(resumed.position)).toBe(0);
    await db.exec('INSERT INTO other VALUES (4)');
    expect(
      ids((await takeChanges(connector, followed, resumed.position, atLeast(1))).changes),
    ).toEqual([4]);
  });

  it('keeps a transaction larger than a batch whole, and holds the server back meanwhile', async () => {
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    await db.exec('INSERT INTO other VALUES (1000)');
    const controller = new AbortController();
    const stream = streamOf(
      connector,
      [tableNamed(tables, 'other')],
      reader.position!,
      controller.signal,
    )[Symbol.asyncIterator]();
    try {
      expect((await nextChanges(stream)).changes).toHaveLength(1);
      // The consumer dawdles over its batch while 30,000 changes arrive: past the queue's high
      // mark the socket is paused, and reading resumes as the stream drains it.
      await db.exec('INSERT INTO other SELECT n FROM generate_series(1001, 31000) AS n');
      await db.exec('INSERT INTO other VALUES (31001)');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const changes: SourceChange[] = [];
      while (changes.length < 30_001) {
        const batch = await nextChanges(stream);
        if (changes.length === 0) expect(batch.changes.length).toBeGreaterThanOrEqual(30_000);
        changes.push(...batch.changes);
      }
      expect(changes.map((change) => change.op === 'insert' && change.row[0])).toEqual(
        Array.from({ length: 30_001 }, (_, i) => 1001 + i),
      );
    } finally {
      controller.abort();
      await stream.return?.();
    }
  });

  it('ends iteration promptly when the signal aborts, and frees the slot', async () => {
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    const controller = new AbortController();
    const consumed = drain(
      streamOf(connector, [tableNamed(tables, 'other')], reader.position!, controller.signal),
    );
    await expect
      .poll(async () => (await slotRow(admin, connector.replicationName))?.active)
      .toBe(true);
    const abortedAt = Date.now();
    controller.abort();
    await consumed;
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    await expect
      .poll(async () => (await slotRow(admin, connector.replicationName))?.active)
      .toBe(false);

    // A consumer's break frees it too.
    await db.exec('INSERT INTO other VALUES (10)');
    await takeChanges(connector, [tableNamed(tables, 'other')], reader.position!, atLeast(1));
    await expect
      .poll(async () => (await slotRow(admin, connector.replicationName))?.active)
      .toBe(false);
  });

  it('reports a lost connection without host or password in the message', async () => {
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    const controller = new AbortController();
    try {
      const failure = rejection(
        drain(
          streamOf(connector, [tableNamed(tables, 'other')], reader.position!, controller.signal),
        ),
      );
      await expect
        .poll(async () => (await slotRow(admin, connector.replicationName))?.active)
        .toBe(true);
      await admin.query(
        'SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1',
        [connector.replicationName],
      );
      const error = await failure;
      expect(error).toBeInstanceOf(SourceConnectionError);
      expect(error.code).toBe('source_connection_lost');
      expect(error.message).not.toContain('127.0.0.1');
    } finally {
      controller.abort();
    }
  });

  it('fails with PositionExpiredError when the slot was dropped meanwhile', async () => {
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    await admin.query('SELECT pg_drop_replication_slot($1)', [connector.replicationName]);
    const error = await rejection(
      takeChanges(connector, [tableNamed(tables, 'other')], reader.position!, atLeast(1)),
    );
    expect(error).toBeInstanceOf(PositionExpiredError);
    expect(error.message).toBe(
      `The replication slot "${connector.replicationName}" no longer exists: take a new snapshot.`,
    );
    expect((error as PositionExpiredError).position).toBe(reader.position!.serialize());
  });

  it('refuses to publish a table without a replica identity', async () => {
    const error = await rejection(
      connector.openSnapshot({ withPosition: true, tables: ['no_key'] }),
    );
    expect(error).toBeInstanceOf(ReplicationError);
    expect(error.code).toBe('replication_not_ready');
    expect((error as ReplicationError).issues).toEqual([
      'Table "no_key" has no replica identity: add a primary key or set REPLICA IDENTITY FULL on it, so that its updates and deletes can be streamed.',
    ]);
    // Not in any publication, the table still takes updates.
    await db.exec("INSERT INTO no_key VALUES ('a'); UPDATE no_key SET note = 'b'");
  });

  it('dropReplication removes slot and publication, ending a running stream', async () => {
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['other'] });
    await reader.close();
    const name = connector.replicationName;
    const controller = new AbortController();
    const consumed = drain(
      streamOf(connector, [tableNamed(tables, 'other')], reader.position!, controller.signal),
    );
    await expect.poll(async () => (await slotRow(admin, name))?.active).toBe(true);
    await connector.dropReplication();
    await consumed;
    expect(await slotRow(admin, name)).toBeUndefined();
    expect(await db.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name])).toEqual([]);
    await connector.dropReplication();
  });

  it('checks the replication settings and privileges', async () => {
    const readiness = await connector.checkReplication();
    expect(readiness).toMatchObject({
      ready: true,
      issues: [],
      facts: {
        walLevel: 'logical',
        maxReplicationSlots: 64,
        maxWalSenders: 64,
        replicationPrivilege: true,
        canCreatePublication: true,
      },
    });
    expect(readiness.facts.freeReplicationSlots).toBeGreaterThan(0);

    const role = `plain_${db.name}`;
    await admin.exec(`CREATE ROLE ${role} LOGIN`);
    const plain = postgresConnector(db, role);
    try {
      const refused = await plain.checkReplication();
      expect(refused.ready).toBe(false);
      expect(refused.facts).toMatchObject({
        replicationPrivilege: false,
        canCreatePublication: false,
      });
      expect(refused.issues).toEqual([
        'Give the user the REPLICATION attribute (or make it a superuser), so that it can stream changes.',
        'Grant the user CREATE on the database, so that it can create the publication of the followed tables.',
      ]);
      const error = await rejection(plain.openSnapshot({ withPosition: true }));
      expect(error.code).toBe('replication_not_ready');
      expect((error as ReplicationError).issues).toEqual(refused.issues);
    } finally {
      await plain.close();
      await admin.exec(`DROP ROLE ${role}`);
    }
  });

  it('opens a snapshot without a position as before', async () => {
    const reader = await connector.openSnapshot();
    try {
      expect(reader.position).toBeNull();
    } finally {
      await reader.close();
    }
    expect(connector.positionFromString('postgres:00000000016B3748').toString()).toBe('0/16B3748');
  });
});
