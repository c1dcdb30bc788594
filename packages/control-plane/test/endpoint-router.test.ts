import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect } from 'node:net';
import { HTTP_LIMITS } from '@replix/runtime';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EndpointRouter,
  endToEndHeaders,
  leastBusy,
} from '../src/adapters/drivers/process/endpoint-router.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
let router: EndpointRouter;

/** A stand-in instance on its own port; resolves with its private URL. */
async function upstream(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

async function openRouted(handler: Handler): Promise<number> {
  router = new EndpointRouter({ log: pino({ level: 'silent' }) });
  const port = await router.open('db', null);
  router.route('db', 'instance-1', [await upstream(handler)]);
  return port;
}

/** A replica that answers with the method and body it received. */
const echo: Handler = (req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
  });
  req.on('end', () => res.end(`got ${req.method} ${body}`));
};

/** Four POSTs through the endpoint, each answered by an `echo` replica with its own body. */
async function expectFourQueriesAnswered(port: number): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const response = await fetch(`http://127.0.0.1:${port}/query`, {
      method: 'POST',
      body: `item { id } #${i}`,
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`got POST item { id } #${i}`);
  }
}

afterEach(async () => {
  await router?.closeAll();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

describe('the endpoint router', () => {
  it('answers 503 with the instance envelope and the reason while nothing is routed', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    router.unroute('db', 'The database is paused: resume it to serve queries.');
    const response = await fetch(`http://127.0.0.1:${port}/query`, {
      method: 'POST',
      body: 'item { id }',
    });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({
      error: {
        code: 'service_unavailable',
        message: 'The database is paused: resume it to serve queries.',
      },
    });
  });

  it('keeps its port when opened again, and listens on a given port', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    expect(await router.open('db', null)).toBe(port);
    await router.close('db');
    expect(await router.open('db', port)).toBe(port);
  });

  it('forwards method, path, body and end-to-end headers; drops hop-by-hop ones; sets X-Forwarded-*', async () => {
    let seen: {
      method?: string;
      url?: string;
      headers?: IncomingMessage['headers'];
      body?: string;
    } = {};
    const port = await openRouted(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(201, { 'x-answer': 'yes', 'proxy-authenticate': 'Basic' });
      res.end('created');
    });
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        {
          port,
          method: 'POST',
          path: '/query?x=1',
          headers: {
            authorization: 'Bearer k',
            connection: 'keep-alive, x-secret-hop',
            'x-secret-hop': 'drop me',
            te: 'trailers',
            'proxy-authorization': 'Basic abc',
          },
        },
        resolve,
      );
      req.on('error', reject);
      req.end('item { id }');
    });
    let text = '';
    for await (const chunk of response) text += chunk;
    expect(response.statusCode).toBe(201);
    expect(text).toBe('created');
    expect(response.headers['x-answer']).toBe('yes');
    expect(response.headers['proxy-authenticate']).toBeUndefined();
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/query?x=1');
    expect(seen.body).toBe('item { id }');
    expect(seen.headers?.authorization).toBe('Bearer k');
    expect(seen.headers?.['x-secret-hop']).toBeUndefined();
    expect(seen.headers?.te).toBeUndefined();
    expect(seen.headers?.['proxy-authorization']).toBeUndefined();
    expect(seen.headers?.['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen.headers?.['x-forwarded-proto']).toBe('http');
  });

  it('streams the answer: the first chunk arrives before the instance has finished', async () => {
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const port = await openRouted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[first');
      finished.then(() => res.end(',last]'));
    });
    const response = await fetch(`http://127.0.0.1:${port}/query`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('[first');
    finish();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      rest += new TextDecoder().decode(chunk.value);
    expect(rest).toBe(',last]');
  });

  it('streams a large request body to the instance before the client has sent all of it', async () => {
    let firstChunk = '';
    let gotFirst: () => void = () => {};
    const first = new Promise<void>((resolve) => {
      gotFirst = resolve;
    });
    const port = await openRouted((req, res) => {
      req.once('data', (chunk) => {
        firstChunk = String(chunk);
        gotFirst();
      });
      req.on('end', () => res.end('ok'));
    });
    const req = request({ port, method: 'POST', path: '/query' });
    const answered = once(req, 'response') as Promise<[IncomingMessage]>;
    // Past 64 KiB (what the router reads whole, to be able to send it again), a body streams.
    req.write(`item { ${' '.repeat(70_000)}`);
    // The rest is sent only once the instance has the first part.
    await first;
    req.end('id }');
    const [response] = await answered;
    let text = '';
    for await (const chunk of response) text += chunk;
    expect(firstChunk.startsWith('item { ')).toBe(true);
    expect(text).toBe('ok');
  });

  it('answers other clients while one client is slow to send its request', async () => {
    const port = await openRouted((req, res) => {
      req.on('error', () => {});
      req.resume();
      req.on('end', () => res.end('answered'));
    });
    // A client that sends half a body and then nothing: its request stays open.
    const slow = request({
      port,
      method: 'POST',
      path: '/query',
      headers: { 'content-length': '100' },
    });
    slow.on('error', () => {});
    slow.write('item {');
    const answers = await Promise.all(
      [1, 2, 3].map(async () => (await fetch(`http://127.0.0.1:${port}/query`)).text()),
    );
    expect(answers).toEqual(['answered', 'answered', 'answered']);
    slow.destroy();
  });

  it('aborts the upstream request when the client goes away', async () => {
    let upstreamClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => {
      upstreamClosed = resolve;
    });
    const port = await openRouted((req, res) => {
      res.writeHead(200);
      res.write('started');
      // Never ends by itself: only the client's disconnect can finish it.
      req.socket.on('close', upstreamClosed);
    });
    const controller = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}/query`, { signal: controller.signal });
    await (response.body as ReadableStream<Uint8Array>).getReader().read();
    controller.abort();
    await closed;
  });

  it('forwards nothing of a request whose client goes away before the end of its body', async () => {
    let forwarded = 0;
    const port = await openRouted((req, res) => {
      forwarded += 1;
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /query HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nitem { id');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    // A whole request afterwards is forwarded: the router is listening, and the first never was.
    expect(
      (await fetch(`http://127.0.0.1:${port}/query`, { method: 'POST', body: 'x' })).status,
    ).toBe(200);
    expect(forwarded).toBe(1);
  });

  it('sends new requests to the new instance once switched, and 503 when the instance is unreachable', async () => {
    const port = await openRouted((_req, res) => res.end('old'));
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('old');
    router.route('db', 'instance-2', [await upstream((_req, res) => res.end('new'))]);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('new');
    expect(router.targetOf('db')).toBe('instance-2');
    // A port nothing listens on: the kernel refuses, the client hears the envelope.
    const gone = await upstream(() => {});
    for (const server of servers.splice(0)) server.close();
    router.route('db', 'instance-3', [gone]);
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
  });

  it('spreads requests over the replicas of the instance, alternating while they are equally busy', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    const replicas = [
      await upstream((_req, res) => res.end('r0')),
      await upstream((_req, res) => res.end('r1')),
    ];
    router.route('db', 'instance-1', replicas);
    const answers: string[] = [];
    for (let i = 0; i < 6; i++)
      answers.push(await (await fetch(`http://127.0.0.1:${port}/`)).text());
    expect(answers).toEqual(['r0', 'r1', 'r0', 'r1', 'r0', 'r1']);
  });

  it('sends the next request to the replica with fewer requests in flight', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    const held: ServerResponse[] = [];
    const slow = await upstream((req, res) => {
      if (req.url === '/slow') held.push(res);
      else res.end('r0');
    });
    const fast = await upstream((_req, res) => res.end('r1'));
    router.route('db', 'instance-1', [slow, fast]);
    // The first request goes to replica 0 and stays there, unanswered.
    const pending = fetch(`http://127.0.0.1:${port}/slow`);
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Replica 0 has one in flight: every next request goes to replica 1 until it answers.
    const answers: string[] = [];
    for (let i = 0; i < 4; i++)
      answers.push(await (await fetch(`http://127.0.0.1:${port}/`)).text());
    expect(answers).toEqual(['r1', 'r1', 'r1', 'r1']);
    held[0]?.end('slow');
    expect(await (await pending).text()).toBe('slow');
  });

  it('streams a live query through, and does not count it in flight while it stays open', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    const streams: ServerResponse[] = [];
    const live = await upstream((req, res) => {
      if (req.headers.accept !== 'text/event-stream') return res.end('r0');
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: first\n\n');
      streams.push(res);
    });
    const other = await upstream((_req, res) => res.end('r1'));
    router.route('db', 'instance-1', [live, other]);
    const stream = await fetch(`http://127.0.0.1:${port}/query`, {
      headers: { Accept: 'text/event-stream' },
    });
    const reader = stream.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    // The open stream does not make replica 0 look busy: requests still alternate.
    const answers: string[] = [];
    for (let i = 0; i < 4; i++)
      answers.push(await (await fetch(`http://127.0.0.1:${port}/`)).text());
    expect(answers.sort()).toEqual(['r0', 'r0', 'r1', 'r1']);
    streams[0]?.write('data: second\n\n');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: second\n\n');
    await reader.cancel();
  });

  it('tries the next replica when one cannot be reached, body included, and answers 503 only when none can', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    const gone = await upstream(() => {});
    (servers.pop() as Server).close();
    const alive = await upstream(echo);
    router.route('db', 'instance-1', [gone, alive]);
    await expectFourQueriesAnswered(port);
    router.route('db', 'instance-2', [gone, gone]);
    const refused = await fetch(`http://127.0.0.1:${port}/query`, { method: 'POST', body: 'x' });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'service_unavailable',
    );
  });

  it('sends a request again to the next replica when one drops it unanswered (a replica that died on a kept-alive connection)', async () => {
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    let dropped = 0;
    // Takes the request, then its connection ends without an answer, as when the process dies.
    const dying = await upstream((req) => {
      dropped += 1;
      req.socket.destroy();
    });
    const alive = await upstream(echo);
    router.route('db', 'instance-1', [dying, alive]);
    await expectFourQueriesAnswered(port);
    // The requests did reach the dying replica: the alternation sent it every other one.
    expect(dropped).toBe(2);
  });

  it('picks the least busy backend not yet tried, starting its ties at the turn', () => {
    const a = { inFlight: 1 };
    const b = { inFlight: 0 };
    const c = { inFlight: 0 };
    expect(leastBusy([a, b, c], new Set(), 0)).toBe(b);
    expect(leastBusy([a, b, c], new Set(), 2)).toBe(c);
    expect(leastBusy([a, b, c], new Set([b, c]), 0)).toBe(a);
    expect(leastBusy([a, b, c], new Set([a, b, c]), 0)).toBeUndefined();
  });

  it('refuses oversized headers itself, with the instance envelope', async () => {
    router = new EndpointRouter({
      log: pino({ level: 'silent' }),
      limits: {
        ...HTTP_LIMITS,
        max_header_bytes: 1024,
        headers_timeout_ms: 20_000,
        request_timeout_ms: 30_000,
        timeout_check_interval_ms: 1000,
      },
    });
    const port = await router.open('db', null);
    const response = await fetch(`http://127.0.0.1:${port}/query?q=${'x'.repeat(4000)}`);
    expect(response.status).toBe(431);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'request_header_too_large',
    );
  });

  it('keeps only end-to-end headers', () => {
    expect(
      endToEndHeaders({
        connection: 'close, x-a',
        'x-a': '1',
        'x-b': '2',
        'transfer-encoding': 'chunked',
        upgrade: 'h2c',
      }),
    ).toEqual({ 'x-b': '2' });
  });
});
