import type { SourceTable } from '@replix/engine';
import { freePort } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotReader, SourceBackend, SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import {
  PositionExpiredError,
  SourceConnectionError,
  SourceError,
  SourceQueryError,
} from '../src/errors.ts';
import type { ChangeBatch, ReplicationPosition } from '../src/replication.ts';

/** A fresh database on the backend's test server. */
export interface ContractDatabase {
  readonly name: string;
  /** A source URL naming the database, as a user of Replix would give it. */
  readonly url: string;
  exec(sql: string): Promise<void>;
  /** Drops the database whatever it holds, and whatever the fixture made for it. */
  drop(): Promise<void>;
}

/** What the contract needs of one backend: its servers, its SQL, and where it may differ. */
export interface ConnectorFixture {
  /** Names the suite: `MySqlConnector`, `PostgresConnector`, `MsSqlConnector`. */
  readonly title: string;
  readonly backend: SourceBackend;
  /** False skips the suite (SQL Server runs only where MSSQL_URL names a server). */
  readonly enabled: boolean;
  createDatabase(sql: string): Promise<ContractDatabase>;
  /** Replix's open connections to the database: the snapshot leak checks count them. */
  connectionsTo(db: ContractDatabase): Promise<number>;
  readonly sql: {
    /** `big` (id, label: 'row <id>', ids 1 to 20,000) and `small` (ids 1 and 2). */
    readonly snapshotTables: string;
    /** `events` (id int primary key): the change stream tests write to it. */
    readonly eventsTable: string;
  };
  /**
   * The keys fixture: tables `audit_log` (no keys), `customers` (id; unique email; rows 1 to 3,
   * statistics fresh), `products` (region, sku), `orders` (id; `fk_orders_customer` to
   * customers, and `fk_orders_ext` to a table outside the connector's schema), `order_lines`
   * ((order_id, line_no); unique (order_id, region, sku); `fk_lines_order` to orders with
   * cascades, `fk_lines_product` to products) and a view `customer_emails`.
   */
  createKeysDatabase(): Promise<ContractDatabase>;
  /**
   * The rule introspection reports for a foreign key without one (`restrict`, `no action`);
   * undefined where the backend's introspection reports no rules at all.
   */
  readonly defaultForeignKeyRule: 'restrict' | 'no action' | undefined;
  /** The estimate of a table never analysed, when the backend has a fixed answer for it. */
  readonly unanalysedEstimate?: null;
  /** The driver's code for an unknown column in a `where`. */
  readonly unknownColumnCode: string;
  /**
   * Whether a read the consumer stops early leaves the snapshot open (the rest of the result is
   * cancelled), or gives the snapshot and its connection up (MySQL cannot abandon a result).
   */
  readonly earlyStopKeepsSnapshot: boolean;
  /** Whether a full table read returns rows in key order (so order is asserted). */
  readonly readsInKeyOrder: boolean;
  /**
   * A URL for `db` the server refuses at authentication, carrying `password` (a wrong password
   * for a real user, or an unknown role where the test server trusts every password).
   */
  refusedLoginUrl(db: ContractDatabase, password: string): Promise<string>;
  /** Makes `events` followable (SQL Server: CDC and a capture job); stop() ends what it runs. */
  followEvents(db: ContractDatabase): Promise<{ stop(): Promise<void> }>;
  /** A position whose history the source no longer has, near `current`. */
  lostPosition(
    connector: SourceConnector,
    db: ContractDatabase,
    current: ReplicationPosition,
  ): Promise<ReplicationPosition>;
}

/** Every batch of a full read of `table` (within `where`, in batches of `batchSize`). */
export async function readAll(
  reader: SnapshotReader,
  table: SourceTable,
  where?: string,
  batchSize?: number,
) {
  const batches: unknown[][][] = [];
  for await (const batch of reader.readTable({
    table: table.name,
    columns: table.columns,
    where,
    batchSize,
  })) {
    batches.push(batch);
  }
  return batches;
}

export function tableNamed(tables: readonly SourceTable[], name: string): SourceTable {
  const table = tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
}

async function rejection(work: Promise<unknown>): Promise<SourceError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof SourceError) return error;
    throw error;
  }
  throw new Error('expected a SourceError');
}

/** The ids of the inserts in `batches`, in stream order. */
function insertedIds(batches: readonly ChangeBatch[]): unknown[] {
  return batches.flatMap((batch) =>
    batch.changes.flatMap((change) => (change.op === 'insert' ? [change.row[0]] : [])),
  );
}

/**
 * Follows `table` from `from` until an insert of id `last` arrives (or 30 s pass), and returns
 * the batches read: the caller asserts on what came.
 */
async function followUntil(
  connector: SourceConnector,
  table: SourceTable,
  from: ReplicationPosition,
  last: number,
): Promise<ChangeBatch[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 30_000);
  const batches: ChangeBatch[] = [];
  try {
    for await (const batch of connector.streamChanges({
      tables: [{ table: table.name, columns: table.columns }],
      from,
      signal: controller.signal,
    })) {
      batches.push(batch);
      if (insertedIds(batches).includes(last)) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return batches;
}

/**
 * Registers the tests every connector passes: introspection of keys, batched snapshot reads,
 * snapshot consistency, early stops, error codes, and change streams that resume from a batch
 * position and fail on a position whose history is gone.
 */
export function connectorContract(fixture: ConnectorFixture): void {
  describe.skipIf(!fixture.enabled)(`${fixture.title} contract`, () => {
    describeKeys(fixture);
    describeSnapshots(fixture);
    describeConnectionErrors(fixture);
    describeChangeStream(fixture);
  });
}

function describeKeys(fixture: ConnectorFixture): void {
  describe('introspection of keys', () => {
    let db: ContractDatabase;

    beforeAll(async () => {
      db = await fixture.createKeysDatabase();
    });

    afterAll(async () => {
      await db?.drop();
    });

    it('lists base tables sorted by name, with keys and same-schema foreign keys', async () => {
      const connector = connectorFromUrl(db.url);
      const rule = fixture.defaultForeignKeyRule;
      const rules = (onDelete: string | undefined, onUpdate: string | undefined) =>
        rule === undefined ? {} : { onDelete, onUpdate };
      try {
        const { tables } = await connector.introspect();
        expect(tables.map((table) => table.name)).toEqual([
          'audit_log',
          'customers',
          'order_lines',
          'orders',
          'products',
        ]);
        expect(tableNamed(tables, 'customers')).toMatchObject({
          primaryKey: ['id'],
          uniqueKeys: [['email']],
          foreignKeys: [],
          estimatedRows: 3,
        });
        expect(tableNamed(tables, 'audit_log')).toMatchObject({
          primaryKey: [],
          uniqueKeys: [],
          foreignKeys: [],
          ...('unanalysedEstimate' in fixture ? { estimatedRows: fixture.unanalysedEstimate } : {}),
        });
        expect(tableNamed(tables, 'products').primaryKey).toEqual(['region', 'sku']);
        expect(tableNamed(tables, 'orders').foreignKeys).toEqual([
          {
            name: 'fk_orders_customer',
            columns: ['customer_id'],
            referencedTable: 'customers',
            referencedColumns: ['id'],
            ...rules(rule, rule),
          },
        ]);
        const lines = tableNamed(tables, 'order_lines');
        expect(lines.primaryKey).toEqual(['order_id', 'line_no']);
        expect(lines.uniqueKeys).toEqual([['order_id', 'region', 'sku']]);
        expect(lines.foreignKeys).toEqual([
          {
            name: 'fk_lines_order',
            columns: ['order_id'],
            referencedTable: 'orders',
            referencedColumns: ['id'],
            ...rules('cascade', 'cascade'),
          },
          {
            name: 'fk_lines_product',
            columns: ['region', 'sku'],
            referencedTable: 'products',
            referencedColumns: ['region', 'sku'],
            ...rules(rule, rule),
          },
        ]);
      } finally {
        await connector.close();
      }
    });
  });
}

function describeSnapshots(fixture: ConnectorFixture): void {
  describe('snapshots', () => {
    let db: ContractDatabase;
    let connector: SourceConnector;
    let big: SourceTable;
    let small: SourceTable;
    const connections = () => fixture.connectionsTo(db);

    beforeAll(async () => {
      db = await fixture.createDatabase(fixture.sql.snapshotTables);
      connector = connectorFromUrl(db.url);
      const { tables } = await connector.introspect();
      big = tableNamed(tables, 'big');
      small = tableNamed(tables, 'small');
      // Closing drops the metadata pool, so every connection to the database from here on is a
      // snapshot's: the leak checks below count them from zero.
      await connector.close();
    });

    afterAll(async () => {
      await connector?.close();
      await db?.drop();
    });

    it('streams 20,000 rows in 4 batches of 5,000, columns in request order', async () => {
      const reader = await connector.openSnapshot();
      try {
        const columns = [...big.columns].reverse();
        const sizes: number[] = [];
        const ids = new Set<unknown>();
        for await (const batch of reader.readTable({ table: 'big', columns, batchSize: 5000 })) {
          sizes.push(batch.length);
          for (const row of batch) ids.add(row[1]);
        }
        expect(sizes).toEqual([5000, 5000, 5000, 5000]);
        expect(ids.size).toBe(20_000);
        const [first] = (await readAll(reader, big, 'id = 7'))[0] ?? [];
        expect(first).toEqual([7, 'row 7']);
      } finally {
        await reader.close();
      }
    });

    it('filters with the where clause, in parentheses', async () => {
      const reader = await connector.openSnapshot();
      try {
        const batches = await readAll(reader, big, "id % 1000 = 0 OR label = 'row 7'");
        expect(batches.flat()).toHaveLength(21);
        const ids = (await readAll(reader, big, 'id <= 3 -- a trailing comment'))
          .flat()
          .map((row) => row[0]);
        expect(fixture.readsInKeyOrder ? ids : ids.sort()).toEqual([1, 2, 3]);
      } finally {
        await reader.close();
      }
    });

    it('reads current rows by key within the where, or each flagged by it', async () => {
      const request = {
        table: 'big',
        columns: big.columns,
        keyColumns: ['id'],
        keys: [[7], [10], [2000], [404_404]],
        where: "id % 1000 = 0 OR label = 'row 7'",
      };
      const byId = (a: unknown[], b: unknown[]) => Number(a[0]) - Number(b[0]);
      try {
        expect((await connector.readRows(request)).sort(byId)).toEqual([
          [7, 'row 7'],
          [2000, 'row 2000'],
        ]);
        const flagged = await connector.readRows({ ...request, flagWhere: true });
        expect(flagged.map(([id, label, flag]) => [id, label, Number(flag)]).sort(byId)).toEqual([
          [7, 'row 7', 1],
          [10, 'row 10', 0],
          [2000, 'row 2000', 1],
        ]);
      } finally {
        // The leak checks below count connections from zero: the metadata pool goes.
        await connector.close();
      }
    });

    it('reports a bad where as a query error and keeps the snapshot usable', async () => {
      const reader = await connector.openSnapshot();
      try {
        const error = await rejection(readAll(reader, big, 'no_such_column = 1'));
        expect(error).toBeInstanceOf(SourceQueryError);
        expect(error.message).not.toContain('no_such_column');
        expect((error as SourceQueryError).driverCode).toBe(fixture.unknownColumnCode);
        expect((await readAll(reader, big, 'id = 1')).flat()).toHaveLength(1);
      } finally {
        await reader.close();
      }
    });

    it('sees the database as of openSnapshot, not rows committed later', async () => {
      const reader = await connector.openSnapshot();
      try {
        await db.exec('INSERT INTO small VALUES (3)');
        expect((await readAll(reader, small)).flat()).toEqual([[1], [2]]);
        expect((await readAll(reader, small)).flat()).toEqual([[1], [2]]);
      } finally {
        await reader.close();
      }
      const fresh = await connector.openSnapshot();
      try {
        expect((await readAll(fresh, small)).flat()).toEqual([[1], [2], [3]]);
      } finally {
        await fresh.close();
      }
    });

    if (fixture.earlyStopKeepsSnapshot) {
      it('abandons the rest of a table when the consumer stops early, keeping the snapshot', async () => {
        await expect.poll(connections).toBe(0);
        const reader = await connector.openSnapshot();
        try {
          expect(await connections()).toBe(1);
          for await (const batch of reader.readTable({ table: 'big', columns: big.columns })) {
            expect(batch).toHaveLength(5000);
            break;
          }
          expect((await readAll(reader, big, 'id <= 10')).flat()).toHaveLength(10);
          await reader.close();
          await reader.close();
          await expect.poll(connections).toBe(0);
          expect((await rejection(readAll(reader, big))).code).toBe('snapshot_closed');
        } finally {
          await reader.close();
        }
      });
    } else {
      it('drops the connection when the consumer stops early, and closes twice safely', async () => {
        await expect.poll(connections).toBe(0);
        const reader = await connector.openSnapshot();
        try {
          expect(await connections()).toBe(1);
          for await (const batch of reader.readTable({ table: 'big', columns: big.columns })) {
            expect(batch).toHaveLength(5000);
            break;
          }
          await expect.poll(connections).toBe(0);
          const error = await rejection(readAll(reader, big));
          expect(error.code).toBe('snapshot_closed');
          await reader.close();
        } finally {
          await reader.close();
        }
      });
    }

    it('refuses a second read while one is under way', async () => {
      const reader = await connector.openSnapshot();
      try {
        const first = reader.readTable({ table: 'big', columns: big.columns, batchSize: 10 });
        const iterator = first[Symbol.asyncIterator]();
        await iterator.next();
        expect((await rejection(readAll(reader, big))).code).toBe('snapshot_busy');
        await iterator.return?.();
        if (fixture.earlyStopKeepsSnapshot) {
          expect((await readAll(reader, big, 'id = 1')).flat()).toHaveLength(1);
        }
      } finally {
        await reader.close();
      }
    });

    it('closes snapshots still open when the connector closes, even mid-read', async () => {
      const local = connectorFromUrl(db.url);
      try {
        await expect.poll(connections).toBe(0);
        await local.openSnapshot();
        const reading = await local.openSnapshot();
        const iterator = reading
          .readTable({ table: 'big', columns: big.columns, batchSize: 10 })
          [Symbol.asyncIterator]();
        await iterator.next();
        expect(await connections()).toBe(2);
        await local.close();
        await expect.poll(connections).toBe(0);
        await iterator.return?.();
      } finally {
        await local.close();
      }
    });
  });
}

function describeConnectionErrors(fixture: ConnectorFixture): void {
  describe('connection errors', () => {
    const SECRET = 'wrong-S3cret-pw';
    let db: ContractDatabase;

    beforeAll(async () => {
      db = await fixture.createDatabase('CREATE TABLE t (id int PRIMARY KEY)');
    });

    afterAll(async () => {
      await db?.drop();
    });

    it('reports a refused login without the password', async () => {
      const connector = connectorFromUrl(await fixture.refusedLoginUrl(db, SECRET));
      try {
        // Each attempt starts only when awaited: a second one rejecting first would go unhandled.
        for (const attempt of [() => connector.introspect(), () => connector.openSnapshot()]) {
          const error = await rejection(attempt());
          expect(error).toBeInstanceOf(SourceConnectionError);
          expect(error.code).toBe('source_auth_failed');
          expect(error.message).toBe('Authentication to the source database failed.');
          expect(JSON.stringify({ ...error, message: error.message })).not.toContain(SECRET);
          expect(error.stack).not.toContain(SECRET);
        }
      } finally {
        await connector.close();
      }
    });

    it('reports a closed port as unreachable, without password or host in the message', async () => {
      const closed = await freePort();
      const url = new URL(db.url);
      url.hostname = '127.0.0.1';
      url.port = String(closed);
      url.password = SECRET;
      const connector = connectorFromUrl(url.toString());
      try {
        // Each attempt starts only when awaited: a second one rejecting first would go unhandled.
        for (const attempt of [() => connector.introspect(), () => connector.openSnapshot()]) {
          const error = await rejection(attempt());
          expect(error.code).toBe('source_unreachable');
          expect(error.message).toBe('Could not connect to the source database (ECONNREFUSED).');
          expect(error).toMatchObject({
            host: '127.0.0.1',
            port: closed,
            backend: fixture.backend,
          });
        }
      } finally {
        await connector.close();
      }
    });

    it('reports a missing database', async () => {
      const url = new URL(db.url);
      url.pathname = '/no_such_db_here';
      const connector = connectorFromUrl(url.toString());
      try {
        expect((await rejection(connector.introspect())).code).toBe('source_database_not_found');
      } finally {
        await connector.close();
      }
    });
  });
}

function describeChangeStream(fixture: ConnectorFixture): void {
  describe('change stream', () => {
    let db: ContractDatabase;
    let connector: SourceConnector;
    let events: SourceTable;
    let capture: { stop(): Promise<void> } | undefined;

    /** The position a snapshot taken now stands at. */
    async function positionNow(): Promise<ReplicationPosition> {
      const reader = await connector.openSnapshot({ withPosition: true, tables: ['events'] });
      await reader.close();
      if (reader.position === null) throw new Error('no position');
      return reader.position;
    }

    beforeAll(async () => {
      db = await fixture.createDatabase(fixture.sql.eventsTable);
      capture = await fixture.followEvents(db);
      connector = connectorFromUrl(db.url);
      events = tableNamed((await connector.introspect()).tables, 'events');
    }, 120_000);

    afterAll(async () => {
      await capture?.stop();
      await connector?.dropReplication();
      await connector?.close();
      await db?.drop();
    }, 120_000);

    it('resumes from a batch position without replaying anything before it', async () => {
      const from = await positionNow();
      await db.exec('INSERT INTO events VALUES (1)');
      const afterOne = (await followUntil(connector, events, from, 1)).at(-1)!.position;
      await db.exec('INSERT INTO events VALUES (2)');
      const afterTwo = (await followUntil(connector, events, afterOne, 2)).at(-1)!.position;
      expect(afterOne.compare(from)).toBeGreaterThan(0);
      expect(afterTwo.compare(afterOne)).toBeGreaterThan(0);
      await db.exec('INSERT INTO events VALUES (3)');

      for (const [position, expected] of [
        [afterOne, [2, 3]],
        [afterTwo, [3]],
        [connector.positionFromString(afterTwo.serialize()), [3]],
      ] as const) {
        expect(insertedIds(await followUntil(connector, events, position, 3))).toEqual(expected);
      }
    });

    it('fails with PositionExpiredError for a position older than the history', async () => {
      const lost = await fixture.lostPosition(connector, db, await positionNow());
      const stream = connector.streamChanges({
        tables: [{ table: 'events', columns: events.columns }],
        from: lost,
        signal: new AbortController().signal,
      });
      const error = await stream[Symbol.asyncIterator]()
        .next()
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).toBeInstanceOf(PositionExpiredError);
    });
  });
}
