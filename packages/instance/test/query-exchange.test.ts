import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { QueryExchange } from '../src/http/query-exchange.ts';
import { fixedFields } from '../src/http/response-head.ts';

let server: Server | undefined;
afterEach(async () => {
  const running = server;
  server = undefined;
  running?.closeAllConnections();
  if (running) await new Promise((done) => running.close(done));
});

/** A server answering each request through a `QueryExchange` that `answer` drives. */
async function ask(
  answer: (exchange: QueryExchange) => void,
): Promise<IncomingMessage & { body: string }> {
  const fixed = fixedFields(['x-service-version', '9.9.9', 'vary', 'Origin']);
  server = createServer((request, response) => {
    answer(new QueryExchange(request, response, fixed, { error: () => {} }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  const response = await new Promise<IncomingMessage>((done, fail) => {
    get({ host: '127.0.0.1', port: address.port, path: '/' }, done).on('error', fail);
  });
  let body = '';
  for await (const chunk of response) body += String(chunk);
  return Object.assign(response, { body });
}

describe('QueryExchange', () => {
  it('sends the fixed fields, then its own, with the body', async () => {
    const response = await ask((exchange) => {
      exchange.header('etag', '"t"').send(200, '{"data":[]}');
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-service-version']).toBe('9.9.9');
    expect(response.headers.vary).toBe('Origin');
    expect(response.headers.etag).toBe('"t"');
    expect(response.headers['content-length']).toBe('11');
    expect(response.body).toBe('{"data":[]}');
  });

  it('replaces a fixed field set again, once, whichever way the answer is written', async () => {
    for (const body of ['{}', undefined]) {
      const response = await ask((exchange) => {
        exchange.header('vary', 'Accept').send(body === undefined ? 304 : 200, body);
      });
      const varyLines = response.rawHeaders.filter((_, i) => i % 2 === 0 && /^vary$/i.test(_));
      expect(varyLines).toHaveLength(1);
      expect(response.headers.vary).toBe('Accept');
      expect(response.headers['x-service-version']).toBe('9.9.9');
      server?.closeAllConnections();
      await new Promise((done) => server?.close(done));
      server = undefined;
    }
  });
});
