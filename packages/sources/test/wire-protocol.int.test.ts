import { createServer, type Server } from 'node:net';
import { testMariaDb, testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolMismatch, wireProtocolAt } from '../src/wire-protocol.ts';

/** A port that accepts connections and never says anything. */
function silentServer(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(() => {});
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('which protocol a port speaks', () => {
  let maria: URL;
  let postgres: URL;
  let silent: Server;

  beforeAll(async () => {
    maria = new URL((await testMariaDb().createDatabase('SELECT 1')).url);
    postgres = new URL((await testPostgres().createDatabase('SELECT 1')).url);
    silent = await silentServer();
  });
  afterAll(() => silent?.close());

  const at = (url: URL) => [url.hostname, Number(url.port)] as const;

  it("tells a MariaDB port from a PostgreSQL one, asked either engine's way", async () => {
    expect(await wireProtocolAt(...at(maria))).toBe('mysql');
    expect(await wireProtocolAt(...at(maria), { askFirst: true })).toBe('mysql');
    expect(await wireProtocolAt(...at(postgres))).toBe('postgres');
    expect(await wireProtocolAt(...at(postgres), { askFirst: true })).toBe('postgres');
  });

  it('is unknown for a port that says nothing or is closed', async () => {
    const port = (silent.address() as { port: number }).port;
    expect(await wireProtocolAt('127.0.0.1', port, { timeoutMs: 1_500 })).toBe('unknown');
    const closed = await silentServer();
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await wireProtocolAt('127.0.0.1', closedPort)).toBe('unknown');
  });

  it("names the engine a backend's port belongs to, and nothing when it is the backend's own", async () => {
    expect(await protocolMismatch('mysql', ...at(postgres))).toBe(
      "The server at that port speaks PostgreSQL's protocol, not MySQL/MariaDB's: choose the postgres backend, or the port of the MySQL/MariaDB server (usually 3306).",
    );
    expect(await protocolMismatch('postgres', ...at(maria))).toBe(
      "The server at that port speaks MySQL/MariaDB's protocol, not PostgreSQL's: choose the mysql backend, or the port of the PostgreSQL server (usually 5432).",
    );
    expect(await protocolMismatch('mysql', ...at(maria))).toBeUndefined();
    expect(await protocolMismatch('postgres', ...at(postgres))).toBeUndefined();
  });
});
