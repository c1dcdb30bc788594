import { describe, expect, it } from 'vitest';
import {
  PositionExpiredError,
  ReplicationError,
  SourceConfigError,
  SourceConnectionError,
  type SourceTarget,
} from '../src/errors.ts';
import {
  replicationConnectErrorFrom,
  replicationErrorFrom,
} from '../src/postgres/postgres-replication-errors.ts';
import { postgresReplicationName } from '../src/postgres/postgres-replication-name.ts';
import {
  type PostgresReplicationFacts,
  postgresReplicationIssues,
  postgresReplicationReadiness,
} from '../src/postgres/postgres-replication-readiness.ts';
import { identityIssues, partitionIssues } from '../src/postgres/postgres-replication-setup.ts';
import { type SlotState, slotProblem } from '../src/postgres/postgres-slot-check.ts';

const READY: PostgresReplicationFacts = {
  serverVersionNum: 150_004,
  walLevel: 'logical',
  maxReplicationSlots: 10,
  freeReplicationSlots: 3,
  slotExists: false,
  maxWalSenders: 10,
  replicationPrivilege: true,
  canCreatePublication: true,
};

describe('postgresReplicationIssues', () => {
  it('has nothing to say about a ready server', () => {
    expect(postgresReplicationReadiness(READY)).toEqual({
      ready: true,
      issues: [],
      facts: READY,
    });
  });

  it('says what to change, one sentence per problem', () => {
    expect(
      postgresReplicationIssues({
        ...READY,
        walLevel: 'replica',
        maxWalSenders: 0,
        replicationPrivilege: false,
        canCreatePublication: false,
      }),
    ).toEqual([
      'Set wal_level=logical (it is replica) and restart the server.',
      'Set max_wal_senders to at least 1 (it is 0) and restart the server.',
      'Give the user the REPLICATION attribute (or make it a superuser), so that it can stream changes.',
      'Grant the user CREATE on the database, so that it can create the publication of the followed tables.',
    ]);
  });

  it('needs a free slot, unless its own slot is there to be re-created', () => {
    expect(
      postgresReplicationIssues({ ...READY, maxReplicationSlots: 0, freeReplicationSlots: 0 }),
    ).toEqual(['Set max_replication_slots to at least 1 (it is 0) and restart the server.']);
    const full = { ...READY, maxReplicationSlots: 4, freeReplicationSlots: 0 };
    expect(postgresReplicationIssues(full)).toEqual([
      'All 4 replication slots are in use: drop an unused one, or raise max_replication_slots and restart the server.',
    ]);
    expect(postgresReplicationReadiness({ ...full, slotExists: true }).ready).toBe(true);
  });

  it('names the version when it is too old for pgoutput', () => {
    expect(postgresReplicationIssues({ ...READY, serverVersionNum: 90_624 })).toEqual([
      'Upgrade to PostgreSQL 10 or later (it is 9.6): change data capture needs logical replication with pgoutput.',
    ]);
  });
});

describe('slotProblem', () => {
  const healthy: SlotState = {
    slot: {
      database: 'shop',
      plugin: 'pgoutput',
      walStatus: 'reserved',
      confirmedFlush: '0/1000000',
    },
    currentDatabase: 'shop',
    publicationExists: true,
    publishedTables: new Set(['orders', 'lines']),
  };
  const at = 'postgres:0000000001000000';

  it('accepts a healthy slot whose publication has the tables', () => {
    expect(slotProblem('replix_a', healthy, ['orders', 'lines'], at)).toBeNull();
    // A position past the confirmed one (changes applied but not yet acknowledged) is fine.
    const later = 'postgres:0000000001000100';
    expect(slotProblem('replix_a', healthy, ['orders', 'lines'], later)).toBeNull();
  });

  it('reports what a new snapshot mends as an expired position', () => {
    const cases: [SlotState, string][] = [
      [
        { ...healthy, slot: null },
        'The replication slot "replix_a" no longer exists: take a new snapshot.',
      ],
      [
        { ...healthy, slot: { ...healthy.slot!, walStatus: 'lost' } },
        'The replication slot "replix_a" was invalidated because the WAL it needed was removed: take a new snapshot.',
      ],
      [
        { ...healthy, slot: { ...healthy.slot!, confirmedFlush: '0/1000001' } },
        'The replication slot "replix_a" has confirmed changes past this position: take a new snapshot.',
      ],
      [
        { ...healthy, publicationExists: false },
        'The publication "replix_a" no longer exists: take a new snapshot.',
      ],
      [
        { ...healthy, publishedTables: new Set(['lines']) },
        'The publication "replix_a" does not include "orders": take a new snapshot that follows it.',
      ],
    ];
    for (const [state, message] of cases) {
      const problem = slotProblem('replix_a', state, ['orders', 'lines'], at);
      expect(problem).toBeInstanceOf(PositionExpiredError);
      expect(problem?.message).toBe(message);
      expect((problem as PositionExpiredError).position).toBe(at);
    }
  });

  it('refuses a slot of another database or plugin, which a snapshot would not mend', () => {
    const problem = slotProblem('replix_a', { ...healthy, currentDatabase: 'other' }, [], at);
    expect(problem).toBeInstanceOf(ReplicationError);
    expect(problem?.code).toBe('replication_failed');
  });
});

describe('identityIssues', () => {
  it('accepts a primary key, FULL, or an identity index; refuses the rest', () => {
    const table = (
      name: string,
      identity: string,
      hasPrimaryKey = false,
      hasIdentityIndex = false,
    ) => ({
      name,
      identity,
      hasPrimaryKey,
      hasIdentityIndex,
    });
    expect(
      identityIssues(
        ['keyed', 'full', 'indexed', 'bare', 'nothing', 'gone'],
        [
          table('keyed', 'd', true),
          table('full', 'f'),
          table('indexed', 'i', false, true),
          table('bare', 'd'),
          table('nothing', 'n', true),
        ],
      ),
    ).toEqual([
      'Table "bare" has no replica identity: add a primary key or set REPLICA IDENTITY FULL on it, so that its updates and deletes can be streamed.',
      'Table "nothing" has no replica identity: add a primary key or set REPLICA IDENTITY FULL on it, so that its updates and deletes can be streamed.',
      'Table "gone" does not exist in the schema.',
    ]);
  });
});

describe('partitionIssues', () => {
  const found = [
    {
      name: 'payment',
      identity: 'd',
      hasPrimaryKey: true,
      hasIdentityIndex: false,
      partitioned: true,
    },
    { name: 'customer', identity: 'd', hasPrimaryKey: true, hasIdentityIndex: false },
  ];

  it('needs PostgreSQL 13 to publish a partitioned table through its root', () => {
    expect(partitionIssues(found, 120_017)).toEqual([
      'Table "payment" is partitioned: following it needs PostgreSQL 13 or later, which publishes its partitions\' changes as its own.',
    ]);
    expect(partitionIssues(found, 130_000)).toEqual([]);
    expect(partitionIssues(found, 150_010)).toEqual([]);
  });
});

describe('postgresReplicationName', () => {
  const options = { host: 'db.example', port: 5432, user: 'u', database: 'shop' };

  it('is replix_ and the replication id', () => {
    expect(postgresReplicationName({ ...options, replicationId: 'inst_42' })).toBe(
      'replix_inst_42',
    );
  });

  it('derives a stable name from host, port, database and schema', () => {
    const name = postgresReplicationName(options);
    expect(name).toMatch(/^replix_[0-9a-f]{12}$/);
    expect(postgresReplicationName({ ...options, schema: 'public' })).toBe(name);
    expect(postgresReplicationName({ ...options, schema: 'other' })).not.toBe(name);
    expect(postgresReplicationName({ ...options, port: 5433 })).not.toBe(name);
  });

  it('refuses an id that is no valid slot name', () => {
    for (const replicationId of ['', 'Upper', 'with-dash', 'x'.repeat(57)]) {
      expect(() => postgresReplicationName({ ...options, replicationId })).toThrow(
        SourceConfigError,
      );
    }
    expect(postgresReplicationName({ ...options, replicationId: 'x'.repeat(56) })).toHaveLength(63);
  });
});

describe('replication errors', () => {
  const target: SourceTarget = {
    backend: 'postgres',
    host: 'db.internal',
    port: 5432,
    database: 'shop',
    user: 'replix',
  };
  const serverError = (code: string, message: string) =>
    Object.assign(new Error(message), { code });
  const at = 'postgres:0000000001000000';

  it('reads removed WAL as an expired position', () => {
    const error = replicationErrorFrom(
      serverError(
        '58P01',
        'requested WAL segment 000000010000000000000001 has already been removed',
      ),
      target,
      at,
      'streaming changes',
    );
    expect(error).toBeInstanceOf(PositionExpiredError);
    expect(error.message).toBe(
      'The WAL needed to resume from this position was removed: take a new snapshot.',
    );
  });

  it('reads a busy slot as worth retrying, and a terminated walsender as a lost connection', () => {
    const busy = replicationErrorFrom(
      serverError('55006', 'slot is active for PID 1'),
      target,
      at,
      'x',
    );
    expect(busy).toMatchObject({ code: 'replication_failed', shouldRetry: true });
    const lost = replicationErrorFrom(
      serverError('57P01', 'terminating connection due to administrator command'),
      target,
      at,
      'streaming changes',
    );
    expect(lost).toBeInstanceOf(SourceConnectionError);
    expect(lost.message).toBe('The connection to the source database was lost (57P01).');
  });

  it('reads a refused replication connection as a setup problem, without the host', () => {
    const hba = replicationConnectErrorFrom(
      serverError('28000', 'no pg_hba.conf entry for replication connection from host "10.0.0.1"'),
      target,
    );
    expect(hba).toMatchObject({ code: 'replication_not_ready' });
    expect((hba as ReplicationError).issues).toEqual([
      'Allow replication connections for the user in pg_hba.conf (a line whose database is "replication").',
    ]);
    expect(JSON.stringify({ ...hba, message: hba.message })).not.toContain('10.0.0.1');
    const role = replicationConnectErrorFrom(serverError('42501', 'must be superuser'), target);
    expect((role as ReplicationError).issues).toEqual([
      'Give the user the REPLICATION attribute (or make it a superuser).',
    ]);
  });
});
