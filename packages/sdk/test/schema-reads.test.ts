import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplixClient } from '../src/index.ts';

const META = {
  table: 'accounts',
  query: {},
  pagination: { count: 1, total_matched: 1, has_more: false, limit: 1000 },
  timing_ms: 0.1,
  snapshot: { swap_count: 1, age_ms: 1 },
  version: 'test',
};

function schema(columns: { name: string; type: string }[]): string {
  return JSON.stringify({ tables: [{ name: 'accounts', columns, relations: [] }] });
}

/**
 * An instance as far as the client's numbers go: `/schema` answers the schemas given in turn
 * (the last one again after them), `/query` one row with `id` and a later column `added`.
 */
async function instance(schemas: string[]): Promise<{ url: string; schemaReads: () => number }> {
  let reads = 0;
  const server: Server = createServer((request, response) => {
    if (request.url === '/schema') {
      const body = schemas[Math.min(reads, schemas.length - 1)];
      reads++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    const body = `{"data":[{"id":9007199254740993,"added":12.50}],"meta":${JSON.stringify(META)}}`;
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, schemaReads: () => reads };
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('ReplixClient: the schema its exact numbers follow', () => {
  it('reads /schema once for many queries', async () => {
    const served = await instance([
      schema([
        { name: 'id', type: 'bigint' },
        { name: 'added', type: 'decimal' },
      ]),
    ]);
    const replix = new ReplixClient({ url: served.url, cache: false });
    const answers = await Promise.all([1, 2, 3].map(() => replix.query('accounts { id added }')));
    for (const { data } of answers)
      expect(data).toEqual([{ id: 9007199254740993n, added: '12.50' }]);
    await replix.query('accounts { id added }');
    expect(served.schemaReads()).toBe(1);
  });

  it('reads it again for a field it lacks, and not again for every answer with one', async () => {
    const served = await instance([
      schema([{ name: 'id', type: 'bigint' }]),
      schema([
        { name: 'id', type: 'bigint' },
        { name: 'added', type: 'decimal' },
      ]),
    ]);
    const replix = new ReplixClient({ url: served.url, cache: false });
    const { data } = await replix.query('accounts { id added }');
    expect(data).toEqual([{ id: 9007199254740993n, added: '12.50' }]);
    expect(served.schemaReads()).toBe(2);

    const lacking = await instance([schema([{ name: 'id', type: 'bigint' }])]);
    const client = new ReplixClient({ url: lacking.url, cache: false });
    for (let i = 0; i < 3; i++) {
      // A field no schema has gets plain numbers.
      expect((await client.query('accounts { id added }')).data).toEqual([
        { id: 9007199254740993n, added: 12.5 },
      ]);
    }
    // Read again once (the instance may have been rebuilt), then not for 10 s.
    expect(lacking.schemaReads()).toBe(2);
  });

  it("reads no schema with numbers: 'plain' or a parseJson", async () => {
    const served = await instance([schema([{ name: 'id', type: 'bigint' }])]);
    const plain = new ReplixClient({ url: served.url, numbers: 'plain' });
    expect((await plain.query('accounts { id added }')).data).toEqual([
      { id: 9007199254740992, added: 12.5 },
    ]);
    const own = new ReplixClient({ url: served.url, parseJson: () => ({ data: [], meta: META }) });
    expect((await own.query('accounts { id }')).data).toEqual([]);
    expect(served.schemaReads()).toBe(0);
    expect(() => new ReplixClient({ url: served.url, numbers: 'float' as 'plain' })).toThrow(
      "numbers must be 'exact' or 'plain'",
    );
  });
});
