import { testPostgres } from '@replix/testkit/vitest';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  recordReplicationSource,
  requestReplicationDrop,
} from '../src/adapters/store/replication-sources.ts';
import type { Store } from '../src/adapters/store/schema.ts';
import { DROP_RETRY_SCHEDULE_MS } from '../src/application/reconciler/drop-replication-state.ts';
import { DROP_BY_HAND_DOC } from '../src/application/reconciler/replication-drop-steps.ts';
import { replicationIdFor } from '../src/domain/replication-id.ts';
import {
  POSTGRES_STORE,
  startTestControlPlane,
  type TestControlPlane,
} from './control-plane-harness.ts';
import { insertAccount, insertConnection, insertDatabase } from './lifecycle-fixtures.ts';
import {
  eventually,
  killInstanceProcesses,
  requestAction,
  type SeededSource,
  seedProvision,
  statusReached,
} from './reconciler-fixtures.ts';
import { startTcpForwarder, type TcpForwarder } from './tcp-forwarder.ts';

/** Recorded and notified when every attempt to drop a source's replication state failed. */
/** The stored rows of a seeded database and its connection, as the reconciler reads them. */
async function storedRows(db: Kysely<Store>, databaseId: string, connectionId: string) {
  const database = await db
    .selectFrom('databases')
    .selectAll()
    .where('id', '=', databaseId)
    .executeTakeFirstOrThrow();
  const connection = await db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', connectionId)
    .executeTakeFirstOrThrow();
  return { database, connection };
}

const DROP_FAILED_EVENT = 'database.replication_drop_failed';

type SourceDatabase = Awaited<ReturnType<ReturnType<typeof testPostgres>['createDatabase']>>;

/** The source accepts any password (trust): one is set all the same, to see it stays sealed. */
const PASSWORD = 'launch-time-secret';

describe.each(POSTGRES_STORE)(
  "terminate drops a PostgreSQL source's replication state where it was created (%s store)",
  (kind) => {
    let cp: TestControlPlane;
    let source: SourceDatabase;
    let other: SourceDatabase;
    let forwarder: TcpForwarder;

    beforeAll(async () => {
      const create = () =>
        testPostgres().createDatabase(
          "CREATE TABLE item (id INT PRIMARY KEY, name TEXT); INSERT INTO item VALUES (1, 'one')",
        );
      [source, other] = await Promise.all([create(), create()]);
      forwarder = await startTcpForwarder(Number(new URL(source.url).port));
      cp = await startTestControlPlane(kind, {
        roles: ['reconciler', 'builder'],
        // Every wait between attempts a few milliseconds: the whole schedule in well under a second.
        env: { REPLIX_REPLICATION_DROP_RETRY_SCALE: '0.00001' },
      });
    });
    afterAll(async () => {
      const dataDir = cp?.dataDir;
      await cp?.close();
      if (dataDir) killInstanceProcesses(dataDir);
      await forwarder?.close();
      await Promise.all([source?.drop(), other?.drop()]);
    });

    const stateNames = (seeded: SeededSource) => `replix_${replicationIdFor(seeded.databaseId)}`;
    const stateOn = async (database: SourceDatabase, name: string) => ({
      slots: (
        await database.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [name])
      ).length,
      publications: (
        await database.query('SELECT 1 FROM pg_publication WHERE pubname = $1', [name])
      ).length,
    });
    const provisioned = async (url: string) => {
      const { db, secrets } = cp.context;
      const seeded = await seedProvision(db, secrets, url);
      await db
        .updateTable('connections')
        .set({ password_enc: secrets.seal(PASSWORD) })
        .where('id', '=', seeded.connectionId)
        .execute();
      await statusReached(db, seeded.databaseId, 'running', 110_000);
      return seeded;
    };
    const failureEvents = (databaseId: string) =>
      cp.context.db
        .selectFrom('audit_events')
        .selectAll()
        .where('database_id', '=', databaseId)
        .where('event_type', '=', DROP_FAILED_EVENT)
        .execute();

    it('records the launch settings, password sealed, and drops with them after the connection moved to another database', async () => {
      const { db, secrets } = cp.context;
      const seeded = await provisioned(source.url);
      const name = stateNames(seeded);
      expect(await stateOn(source, name)).toEqual({ slots: 1, publications: 1 });

      const [recorded] = await db
        .selectFrom('replication_sources')
        .selectAll()
        .where('database_id', '=', seeded.databaseId)
        .execute();
      expect(recorded).toMatchObject({
        host: '127.0.0.1',
        port: Number(new URL(source.url).port),
        source_schema: new URL(source.url).pathname.slice(1),
        replicas_launched: 1,
        drop_from: null,
      });
      expect(JSON.stringify(recorded)).not.toContain(PASSWORD);
      expect(secrets.open(recorded?.password_enc as string)).toBe(PASSWORD);

      // The connection now leads to another server (here: a port nothing listens on)...
      await db
        .updateTable('connections')
        .set({ port: 1, updated_at: new Date() })
        .where('id', '=', seeded.connectionId)
        .execute();
      // ...and the database to another source database: neither is where the slot is.
      await db
        .updateTable('databases')
        .set({ source_schema: new URL(other.url).pathname.slice(1) })
        .where('id', '=', seeded.databaseId)
        .execute();
      await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
      await statusReached(db, seeded.databaseId, 'terminated');

      expect(await stateOn(source, name)).toEqual({ slots: 0, publications: 0 });
      const after = await db
        .selectFrom('replication_sources')
        .select(['replicas_launched', 'drop_from', 'drop_attempts', 'drop_failed_at'])
        .where('database_id', '=', seeded.databaseId)
        .execute();
      expect(after).toEqual([
        { replicas_launched: 0, drop_from: null, drop_attempts: 0, drop_failed_at: null },
      ]);
      expect(await failureEvents(seeded.databaseId)).toEqual([]);
    }, 150_000);

    it('retries while the original source is unreachable, then audits and notifies the slot left there', async () => {
      const { db } = cp.context;
      const through = new URL(source.url);
      through.port = String(forwarder.port);
      const seeded = await provisioned(through.href);
      const name = stateNames(seeded);
      expect(await stateOn(source, name)).toEqual({ slots: 1, publications: 1 });

      await forwarder.close();
      await requestAction(db, seeded.databaseId, 'terminate', 'terminating');
      // An unreachable source does not hold up the terminate.
      await statusReached(db, seeded.databaseId, 'terminated');

      const [event] = await eventually(
        async () => {
          const events = await failureEvents(seeded.databaseId);
          return events.length > 0 ? events : undefined;
        },
        60_000,
        'the drop to fail for good',
      );
      const attempts = DROP_RETRY_SCHEDULE_MS.length + 1;
      const database = through.pathname.slice(1);
      expect(event).toMatchObject({ entity_type: 'database', entity_id: seeded.databaseId });
      expect(event?.payload).toMatchObject({
        replicationState: 'replication slot and publication',
        names: [name],
        host: '127.0.0.1',
        port: forwarder.port,
        database,
        attempts,
      });
      expect(JSON.stringify(event?.payload)).not.toContain(PASSWORD);
      const recorded = await db
        .selectFrom('replication_sources')
        .selectAll()
        .where('database_id', '=', seeded.databaseId)
        .executeTakeFirstOrThrow();
      expect(recorded.drop_attempts).toBe(attempts);
      expect(recorded.drop_failed_at).not.toBeNull();
      expect(recorded.lease_owner).toBeNull();

      const notifications = await db
        .selectFrom('notifications')
        .selectAll()
        .where('database_id', '=', seeded.databaseId)
        .where('event_type', '=', DROP_FAILED_EVENT)
        .execute();
      expect(notifications).toHaveLength(1);
      expect(notifications[0]).toMatchObject({ severity: 'error', sticky: true });
      expect(notifications[0]?.message).toContain(name);
      expect(notifications[0]?.message).toContain(`127.0.0.1:${forwarder.port}/${database}`);
      expect(notifications[0]?.message).toContain(DROP_BY_HAND_DOC);
      expect(notifications[0]?.message).not.toContain(PASSWORD);

      // Left where it was, for an operator: docs/replication.md's statements drop it.
      expect(await stateOn(source, name)).toEqual({ slots: 1, publications: 1 });
      await source.exec(`SELECT pg_drop_replication_slot('${name}'); DROP PUBLICATION ${name}`);
      expect(await stateOn(source, name)).toEqual({ slots: 0, publications: 0 });
    }, 150_000);

    it('merges drop requests, and a start on the same source takes its replicas out of a pending drop', async () => {
      const { db } = cp.context;
      const store = { context: cp.context };
      const owner = { accountId: await insertAccount(store, 'business') };
      const connectionId = await insertConnection(store, owner, {
        host: '127.0.0.1',
        port: 1,
        user: 'nobody',
        password: 'pw',
        backend: 'postgres',
      });
      const seeded = await insertDatabase(store, owner, { connectionId, status: 'running' });
      const { database, connection } = await storedRows(db, seeded.id, connectionId);
      const state = async () =>
        db
          .selectFrom('replication_sources')
          .select(['replicas_launched', 'drop_from'])
          .where('database_id', '=', seeded.id)
          .execute();

      await recordReplicationSource(db, database, connection, 3);
      // The same place with new credentials is the same row; a new host is another.
      await recordReplicationSource(db, database, { ...connection, username: 'other' }, 1);
      expect(await state()).toEqual([{ replicas_launched: 3, drop_from: null }]);
      await requestReplicationDrop(db, database, 2, 4); // a resize to 2
      await requestReplicationDrop(db, database, 1, 4); // then to 1: the lower wins
      expect(await state()).toEqual([{ replicas_launched: 3, drop_from: 1 }]);
      // A resize back to 2 starts replica 1 again: only replica 2 still waits.
      await recordReplicationSource(db, database, connection, 2);
      expect(await state()).toEqual([{ replicas_launched: 3, drop_from: 2 }]);
      await recordReplicationSource(db, database, connection, 3);
      expect(await state()).toEqual([{ replicas_launched: 3, drop_from: null }]);
      // Moved to another host: terminate drops on both.
      await recordReplicationSource(db, database, { ...connection, host: '127.0.0.2' }, 1);
      await requestReplicationDrop(db, database, 0, 4);
      expect(await state()).toEqual(
        expect.arrayContaining([
          { replicas_launched: 3, drop_from: 0 },
          { replicas_launched: 1, drop_from: 0 },
        ]),
      );
    });

    it('records nothing for MySQL/MariaDB, whose binlog keeps no state per follower', async () => {
      const { db } = cp.context;
      const store = { context: cp.context };
      const owner = { accountId: await insertAccount(store, 'business') };
      const connectionId = await insertConnection(store, owner);
      const seeded = await insertDatabase(store, owner, { connectionId, status: 'running' });
      const { database, connection } = await storedRows(db, seeded.id, connectionId);
      await recordReplicationSource(db, database, connection, 2);
      await requestReplicationDrop(db, database, 0, 4);
      const recorded = await db
        .selectFrom('replication_sources')
        .select('id')
        .where('database_id', '=', seeded.id)
        .execute();
      expect(recorded).toEqual([]);
    });
  },
);
