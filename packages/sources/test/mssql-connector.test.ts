import { describe, expect, it } from 'vitest';
import { ReplicationError, SourceConnectionError } from '../src/errors.ts';
import { MsSqlConnector } from '../src/mssql/mssql-connector.ts';
import { MsSqlLsn } from '../src/mssql/mssql-position.ts';
import type { ReplicationPosition } from '../src/replication.ts';

// Port 1 on the loopback refuses connections at once: the driver's real failure, no server.
const refused = () =>
  new MsSqlConnector({ host: '127.0.0.1', port: 1, user: 'u', password: 'pw', database: 'db' });

const postgres: ReplicationPosition = {
  backend: 'postgres',
  compare: () => 0,
  serialize: () => '0000000016B3748',
  toString: () => '0/16B3748',
};

describe('MsSqlConnector without a server', () => {
  it('reads schema dbo unless told otherwise', async () => {
    const connector = refused();
    expect(connector.backend).toBe('mssql');
    expect(connector.schema).toBe('dbo');
    await connector.close();
  });

  it('reads positions back and treats acknowledge and dropReplication as no-ops', async () => {
    const connector = refused();
    const position = connector.positionFromString('0000002A000001C80003');
    expect(position).toBeInstanceOf(MsSqlLsn);
    await expect(connector.acknowledge(position)).resolves.toBeUndefined();
    await expect(connector.acknowledge(postgres)).rejects.toBeInstanceOf(ReplicationError);
    await expect(connector.dropReplication()).resolves.toBeUndefined();
    await connector.close();
  });

  it('reports an unreachable server as source_unreachable from every entry point', async () => {
    const connector = refused();
    for (const work of [
      () => connector.introspect(),
      () => connector.checkReplication(),
      () => connector.openSnapshot(),
    ]) {
      const error = await work().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(SourceConnectionError);
      expect(error).toMatchObject({ code: 'source_unreachable', driverCode: 'ECONNREFUSED' });
      expect((error as Error).message).not.toContain('pw');
    }
    const stream = connector.streamChanges({
      tables: [],
      from: MsSqlLsn.parse('0000002A000001C80003'),
      signal: new AbortController().signal,
    });
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: 'source_unreachable',
    });
    await connector.close();
  });

  it('ends a stream whose signal is already aborted without connecting', async () => {
    const connector = refused();
    const controller = new AbortController();
    controller.abort();
    const batches = [];
    for await (const batch of connector.streamChanges({
      tables: [],
      from: MsSqlLsn.parse('0000002A000001C80003'),
      signal: controller.signal,
    })) {
      batches.push(batch);
    }
    expect(batches).toEqual([]);
    await connector.close();
  });
});
