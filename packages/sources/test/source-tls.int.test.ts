import type { SourceTable } from '@replix/engine';
import {
  type DatabaseAdmin,
  type DatabaseServer,
  mariaDbAdmin,
  postgresAdmin,
  type ServerTls,
  startDedicatedServer,
  type TestDatabase,
} from '@replix/testkit';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceConnector } from '../src/connector.ts';
import { connectorFromUrl } from '../src/connector-from-url.ts';
import { SourceError } from '../src/errors.ts';
import { mySqlConnectionOptions } from '../src/mysql/mysql-connection-options.ts';
import { parseSourceUrl } from '../src/parse-source-url.ts';
import { postgresConnectionConfig } from '../src/postgres/postgres-connection-options.ts';
import type { SourceChange } from '../src/replication.ts';
import { serverProbeFor } from '../src/server-probe-for.ts';
import { sourceUrlThroughTunnel } from '../src/source-tls.ts';
import { openSshTunnel } from '../src/ssh-tunnel.ts';
import { startThrowawaySshd } from './throwaway-sshd.ts';

type Engine = 'mariadb' | 'postgres';

const SETUP = 'CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20))';

function adminOf(engine: Engine, serverUrl: string): DatabaseAdmin {
  return engine === 'mariadb' ? mariaDbAdmin(serverUrl) : postgresAdmin(serverUrl);
}

/** The TLS-only user's URL for `db`, with the given query parameters. */
function tlsUrl(db: TestDatabase, tls: ServerTls, params: Record<string, string>): string {
  const url = new URL(db.url);
  url.username = tls.user;
  url.password = tls.password;
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}

async function withConnector<T>(url: string, work: (c: SourceConnector) => Promise<T>) {
  const connector = connectorFromUrl(url, { replicationId: 'tls_test' });
  try {
    return await work(connector);
  } finally {
    await connector.close();
  }
}

async function tableNames(url: string): Promise<string[]> {
  return withConnector(url, async (c) => (await c.introspect()).tables.map((t) => t.name));
}

async function failure(url: string): Promise<SourceError> {
  const error = await tableNames(url).then(
    () => new Error('expected the connection to fail'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SourceError);
  return error as SourceError;
}

/**
 * Whether a session opened with the connector's own connection settings is encrypted, as the
 * server sees it: MariaDB's Ssl_cipher, PostgreSQL's pg_stat_ssl.
 */
async function sessionEncrypted(engine: Engine, url: string): Promise<boolean> {
  const source = parseSourceUrl(url);
  if (engine === 'mariadb' && source.backend === 'mysql') {
    const connection = await mysql.createConnection(mySqlConnectionOptions(source.options, true));
    try {
      const [rows] = await connection.query("SHOW STATUS LIKE 'Ssl_cipher'");
      return String((rows as { Value: string }[])[0]?.Value ?? '') !== '';
    } finally {
      await connection.end();
    }
  }
  if (source.backend !== 'postgres') throw new Error('unexpected engine');
  const client = new pg.Client(postgresConnectionConfig(source.options, true));
  await client.connect();
  try {
    const { rows } = await client.query<{ ssl: boolean }>(
      'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    return rows[0]?.ssl === true;
  } finally {
    await client.end();
  }
}

/** Snapshot with position, one insert, and the change stream from that position. */
async function snapshotThenChange(db: TestDatabase, url: string): Promise<SourceChange[]> {
  return withConnector(url, async (connector) => {
    const table = (await connector.introspect()).tables.find(
      (t) => t.name === 'items',
    ) as SourceTable;
    const reader = await connector.openSnapshot({ withPosition: true, tables: ['items'] });
    const rows: unknown[][] = [];
    try {
      for await (const batch of reader.readTable({ table: 'items', columns: table.columns })) {
        rows.push(...batch);
      }
    } finally {
      await reader.close();
    }
    expect(rows).toEqual([[1, 'snapshot']]);
    const from = reader.position;
    if (from === null) throw new Error('no position');
    await db.exec("INSERT INTO items VALUES (2, 'streamed')");
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 15_000);
    const changes: SourceChange[] = [];
    try {
      for await (const batch of connector.streamChanges({
        tables: [{ table: 'items', columns: table.columns }],
        from,
        signal: controller.signal,
      })) {
        changes.push(...batch.changes);
        if (changes.length > 0) break;
      }
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
    await connector.dropReplication();
    return changes;
  });
}

describe.each<Engine>(['mariadb', 'postgres'])('TLS to %s', (engine) => {
  let server: DatabaseServer;
  let tls: ServerTls;
  let db: TestDatabase;
  let plainDb: TestDatabase;

  beforeAll(async () => {
    server = await startDedicatedServer(engine, { tls: true });
    if (!server.tls) throw new Error('the server has no TLS');
    tls = server.tls;
    db = await adminOf(engine, server.url).createDatabase(
      `${SETUP}; INSERT INTO items VALUES (1, 'snapshot')`,
    );
    plainDb = await (engine === 'mariadb' ? testMariaDb() : testPostgres()).createDatabase(SETUP);
  });

  afterAll(async () => {
    await plainDb?.drop();
    await server?.stop();
  });

  it('require: connects over TLS without checking the certificate', async () => {
    const url = tlsUrl(db, tls, { sslmode: 'require' });
    expect(await tableNames(url)).toEqual(['items']);
    expect(await sessionEncrypted(engine, url)).toBe(true);
  });

  it('verify-full: connects with the CA, and fails clearly without it', async () => {
    const verified = tlsUrl(db, tls, { sslmode: 'verify-full', sslrootcert: tls.caFile });
    expect(await tableNames(verified)).toEqual(['items']);
    expect(await sessionEncrypted(engine, verified)).toBe(true);

    const error = await failure(tlsUrl(db, tls, { sslmode: 'verify-full' }));
    expect(error.code).toBe('source_unreachable');
    expect(error.message).toMatch(
      /^The source server.s TLS certificate is not trusted \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\); tlsMode verify-full/,
    );
    expect(error.message).not.toContain(tls.password);
    expect(error.message).not.toContain('127.0.0.1');
  });

  it('verify-full: checks the host name the certificate must carry', async () => {
    const named = (serverName: string) =>
      tlsUrl(db, tls, {
        sslmode: 'verify-full',
        sslrootcert: tls.caFile,
        sslservername: serverName,
      });
    // What an SSH tunnel's URL looks like: the real server's name, the tunnel's address.
    expect(await tableNames(named('localhost'))).toEqual(['items']);
    const error = await failure(named('db.example.com'));
    expect(error.code).toBe('source_unreachable');
    expect(error.message).toContain("does not carry the server's host name");
    expect(error.message).not.toContain('db.example.com');
  });

  it('verify-full through an SSH tunnel checks the real server name, not the tunnel', async () => {
    const sshd = await startThrowawaySshd();
    const tunnel = await openSshTunnel(
      { host: sshd.host, port: sshd.port, user: sshd.user, privateKey: sshd.privateKey },
      { host: 'localhost', port: server.port },
    );
    try {
      const direct = new URL(tlsUrl(db, tls, { sslmode: 'verify-full', sslrootcert: tls.caFile }));
      direct.hostname = 'localhost';
      const through = sourceUrlThroughTunnel(direct.toString(), tunnel);
      expect(parseSourceUrl(through).options).toMatchObject({
        host: '127.0.0.1',
        tls: { serverName: 'localhost' },
      });
      expect(await tableNames(through)).toEqual(['items']);
    } finally {
      await tunnel.close();
      await sshd.stop();
    }
  });

  it('disable: a user the server only accepts over TLS is refused', async () => {
    const error = await failure(tlsUrl(db, tls, { sslmode: 'disable' }));
    expect(error.code).toBe('source_auth_failed');
    expect(error.message).not.toContain(tls.password);
  });

  it('prefer: TLS on a server that offers it, plain on one that does not', async () => {
    // The TLS-only user gets in only if prefer chose TLS.
    expect(await tableNames(tlsUrl(db, tls, { sslmode: 'prefer' }))).toEqual(['items']);
    const plain = new URL(plainDb.url);
    plain.searchParams.set('sslmode', 'prefer');
    expect(await tableNames(plain.toString())).toEqual(['items']);
    // No sslmode at all means prefer.
    expect(await tableNames(plainDb.url)).toEqual(['items']);
  });

  it('require on a server without TLS fails', async () => {
    const plain = new URL(plainDb.url);
    plain.searchParams.set('sslmode', 'require');
    const error = await failure(plain.toString());
    expect(error.code).toBe('source_unreachable');
    expect(error.message).toContain('does not offer TLS');
  });

  it('the server probe (connection test) follows the same modes', async () => {
    const probe = serverProbeFor(engine === 'mariadb' ? 'mysql' : 'postgres');
    const target = {
      host: '127.0.0.1',
      port: server.port,
      user: tls.user,
      password: tls.password,
      database: engine === 'postgres' ? db.name : undefined,
    };
    const report = await probe.probe({ ...target, tls: { mode: 'require' } });
    expect(report.availableSchemas).toContain(db.name);
    await expect(probe.probe({ ...target, tls: { mode: 'verify-full' } })).rejects.toThrow(
      /TLS certificate is not trusted/,
    );
    await expect(probe.probe({ ...target, tls: { mode: 'disable' } })).rejects.toBeInstanceOf(
      SourceError,
    );
  });

  it('replication: a snapshot and the change stream after it, over verified TLS', async () => {
    const url = tlsUrl(db, tls, { sslmode: 'verify-full', sslrootcert: tls.caFile });
    const changes = await snapshotThenChange(db, url);
    expect(changes).toEqual([{ op: 'insert', table: 'items', row: [2, 'streamed'] }]);
  });
});
