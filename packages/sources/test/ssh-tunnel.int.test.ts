import { createServer } from 'node:net';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorFromUrl, openSshTunnel, SshTunnelError } from '../src/index.ts';
import { startThrowawaySshd, type ThrowawaySshd } from './throwaway-sshd.ts';

describe('SSH tunnels through a real sshd', () => {
  let sshd: ThrowawaySshd;
  let db: TestDatabase;
  let mariaDb: URL;

  beforeAll(async () => {
    sshd = await startThrowawaySshd();
    db = await testMariaDb().createDatabase(
      "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO t VALUES (1, 'one'), (2, 'two')",
    );
    mariaDb = new URL(db.url);
  });
  afterAll(async () => {
    await db?.drop();
    await sshd?.stop();
  });

  const ssh = () => ({
    host: sshd.host,
    port: sshd.port,
    user: sshd.user,
    privateKey: sshd.privateKey,
  });

  it('forwards connections from a local port to the target and runs queries through it', async () => {
    const tunnel = await openSshTunnel(ssh(), {
      host: '127.0.0.1',
      port: Number(mariaDb.port),
    });
    try {
      expect(tunnel.host).toBe('127.0.0.1');
      expect(tunnel.port).not.toBe(Number(mariaDb.port));
      // Two connections at once, both through the one session.
      const connections = await Promise.all(
        [1, 2].map(() =>
          mysql.createConnection({
            host: tunnel.host,
            port: tunnel.port,
            user: 'root',
            database: db.name,
          }),
        ),
      );
      const results = await Promise.all(
        connections.map((c, i) => c.query('SELECT name FROM t WHERE id = ?', [i + 1])),
      );
      expect(results.map(([rows]) => (rows as { name: string }[])[0]?.name)).toEqual([
        'one',
        'two',
      ]);
      await Promise.all(connections.map((c) => c.end()));
    } finally {
      await tunnel.close();
    }
  });

  it('serves a source connector through the tunnel', async () => {
    const tunnel = await openSshTunnel(ssh(), {
      host: '127.0.0.1',
      port: Number(mariaDb.port),
    });
    const connector = connectorFromUrl(`mysql://root@${tunnel.host}:${tunnel.port}/${db.name}`);
    try {
      const schema = await connector.introspect();
      expect(schema.tables.map((t) => t.name)).toEqual(['t']);
    } finally {
      await connector.close();
      await tunnel.close();
    }
  });

  it('stops listening once closed, and closing twice is harmless', async () => {
    const tunnel = await openSshTunnel(ssh(), { host: '127.0.0.1', port: Number(mariaDb.port) });
    await tunnel.close();
    await tunnel.close();
    await expect(
      mysql.createConnection({ host: tunnel.host, port: tunnel.port, user: 'root' }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('rejects a key the server does not accept with source_auth_failed', async () => {
    const error = await openSshTunnel(
      { ...ssh(), privateKey: sshd.strangerKey },
      { host: '127.0.0.1', port: 1 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SshTunnelError);
    expect(error).toMatchObject({ code: 'source_auth_failed' });
    expect((error as Error).message).not.toContain(sshd.user);
  });

  it('rejects an unreadable key and an unreachable server without naming the host', async () => {
    const badKey = await openSshTunnel(
      { ...ssh(), privateKey: 'not a key' },
      { host: '127.0.0.1', port: 1 },
    ).catch((e: unknown) => e);
    expect(badKey).toMatchObject({ code: 'source_auth_failed' });

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await openSshTunnel(
      { ...ssh(), port },
      { host: '127.0.0.1', port: 1 },
    ).catch((e: unknown) => e);
    expect(unreachable).toMatchObject({ code: 'source_unreachable' });
    expect((unreachable as Error).message).toBe(
      'Could not connect to the SSH server (ECONNREFUSED).',
    );
  });

  it('fails a forwarded connection whose target refuses, and keeps the tunnel usable', async () => {
    const tunnel = await openSshTunnel(ssh(), { host: '127.0.0.1', port: 1 });
    try {
      await expect(
        mysql.createConnection({ host: tunnel.host, port: tunnel.port, user: 'root' }),
      ).rejects.toBeDefined();
    } finally {
      await tunnel.close();
    }
  });
});
