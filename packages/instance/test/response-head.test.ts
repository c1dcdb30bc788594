import { once } from 'node:events';
import { createServer, type Server, type ServerResponse, validateHeaderValue } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  endWithHead,
  type FixedFields,
  fixedFields,
  headWriterWorks,
  isPlainValue,
} from '../src/http/response-head.ts';

/** What each test's server answers: its status, fields (fixed ones first) and body. */
interface Answer {
  status: number;
  fixed?: FixedFields;
  fields: (string | number)[];
  body: Buffer | string;
}

/** The fields every answer carries, in the tests. */
const FIXED = fixedFields(['x-service-version', '1.2.3', 'vary', 'Origin']);

const JSON_FIELDS = (body: Buffer | string): (string | number)[] => [
  'etag',
  '"abc"',
  'content-type',
  'application/json; charset=utf-8',
  'content-length',
  Buffer.byteLength(body),
];

let server: Server | undefined;
afterEach(async () => {
  await stopServer();
});

async function stopServer(): Promise<void> {
  const running = server;
  server = undefined;
  if (!running) return;
  running.closeAllConnections();
  await new Promise((done) => running.close(done));
}

/**
 * A server answering every request with `answer`, by `endWithHead` when the path is `/direct`
 * (recording whether it wrote), else by `writeHead` + `end`.
 */
async function serve(
  answer: Answer,
  configure: (server: Server) => void = () => {},
): Promise<{ port: number; wrote: boolean[] }> {
  const wrote: boolean[] = [];
  server = createServer((request, response: ServerResponse) => {
    if (request.url === '/direct') {
      const fixed = answer.fixed ?? FIXED;
      const written = endWithHead(response, answer.status, fixed, answer.fields, answer.body);
      wrote.push(written);
      if (written) return;
    }
    response.writeHead(answer.status, [...(answer.fixed ?? FIXED).list, ...answer.fields]);
    response.end(answer.body);
  });
  configure(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { port: address.port, wrote };
}

/** Sends `raw` on a connection of its own; everything the server sent until it closed or idled. */
async function exchange(
  port: number,
  raw: string,
  idleMs = 150,
): Promise<{ text: string; closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(raw);
  const closed = await new Promise<boolean>((done) => {
    let timer = setTimeout(() => done(false), idleMs);
    socket.on('data', () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(false), idleMs);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      done(true);
    });
  });
  socket.destroy();
  return { text: Buffer.concat(chunks).toString('latin1'), closed };
}

/** The same bytes with the Date field's value blanked (the two answers may straddle a second). */
const undated = (text: string) => text.replaceAll(/\r\nDate: [^\r]*\r\n/g, '\r\nDate: -\r\n');

/** Asks `request` (its path written `PATH`) by both ways; both answers and both closings. */
async function bothWays(port: number, request: string) {
  const direct = await exchange(port, request.replaceAll('PATH', '/direct'));
  const node = await exchange(port, request.replaceAll('PATH', '/node'));
  return { direct, node };
}

const GET = 'GET PATH HTTP/1.1\r\nHost: x\r\n\r\n';

describe('endWithHead', () => {
  it('works on this Node (else every answer takes writeHead + end)', () => {
    expect(headWriterWorks).toBe(true);
  });

  it('writes what writeHead + end write, byte for byte, Date aside', async () => {
    const body = Buffer.from('{"data":[{"id":1}],"meta":{}}');
    const { port, wrote } = await serve({ status: 200, fields: JSON_FIELDS(body), body });
    const { direct, node } = await bothWays(port, GET);
    expect(wrote).toEqual([true]);
    expect(direct.text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(direct.text).toMatch(
      /\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} [\d:]{8} GMT\r\n/,
    );
    expect(direct.text.endsWith(`\r\n\r\n${body}`)).toBe(true);
    expect(undated(direct.text)).toBe(undated(node.text));
    expect(direct.closed).toBe(false);
  });

  it('writes each field with the value of its own answer, the same as the answer before or not', async () => {
    const body = Buffer.from('{}');
    for (const etag of ['"abc"', '"abc"', '"def"', 7, '"abc"']) {
      const fields = ['etag', etag, 'content-length', body.length];
      const { port, wrote } = await serve({ status: 200, fields, body });
      const { direct, node } = await bothWays(port, GET);
      expect(wrote).toEqual([true]);
      expect(direct.text).toContain(`\r\netag: ${etag}\r\n`);
      expect(undated(direct.text)).toBe(undated(node.text));
      await stopServer();
    }
  });

  it('dates each answer by the second it is written in', async () => {
    const body = Buffer.from('{}');
    const { port } = await serve({ status: 200, fields: JSON_FIELDS(body), body });
    const dateOf = (text: string) => Date.parse(/\r\nDate: ([^\r]*)\r\n/.exec(text)?.[1] ?? '');
    const dates: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = Math.floor(Date.now() / 1000) * 1000;
      const { text } = await exchange(port, GET.replace('PATH', '/direct'), 20);
      const after = Date.now();
      const date = dateOf(text);
      // The cached line is this second's: never older, never ahead of the clock.
      expect(date).toBeGreaterThanOrEqual(before);
      expect(date).toBeLessThanOrEqual(after);
      dates.push(date);
      await new Promise((done) => setTimeout(done, 600));
    }
    // 1.2 s or more apart: the first and last answers carry different seconds.
    expect(dates[2]).toBeGreaterThan(dates[0] as number);
  });

  it('writes a text body as UTF-8, and an error status, as Node does', async () => {
    const body = '{"error":{"code":"bad_request","message":"é ✓"}}';
    const { port, wrote } = await serve({ status: 400, fields: JSON_FIELDS(body), body });
    const { direct, node } = await bothWays(port, GET);
    expect(wrote).toEqual([true]);
    expect(direct.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(undated(direct.text)).toBe(undated(node.text));
  });

  it('closes the connection where Node would: Connection: close, HTTP/1.0, the last request a socket may carry', async () => {
    const body = Buffer.from('{}');
    const { port } = await serve({ status: 200, fields: JSON_FIELDS(body), body }, (s) => {
      s.maxRequestsPerSocket = 2;
    });
    const closing = await bothWays(
      port,
      'GET PATH HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(undated(closing.direct.text)).toBe(undated(closing.node.text));
    expect(closing.direct.text).toContain('\r\nConnection: close\r\n');
    expect([closing.direct.closed, closing.node.closed]).toEqual([true, true]);

    const old = await bothWays(port, 'GET PATH HTTP/1.0\r\n\r\n');
    expect(undated(old.direct.text)).toBe(undated(old.node.text));
    expect([old.direct.closed, old.node.closed]).toEqual([true, true]);

    // Two requests in one packet on a socket allowed two: both answered, the second saying close
    // (and Node leaves the closing to the client).
    const twice = await bothWays(port, GET + GET);
    expect(undated(twice.direct.text)).toBe(undated(twice.node.text));
    expect(twice.direct.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(twice.direct.text).toContain('Keep-Alive: timeout=5, max=2\r\n');
    expect(twice.direct.text).toContain('\r\nConnection: close\r\n');
    expect(twice.direct.closed).toBe(twice.node.closed);
  });

  it('answers pipelined requests in order, on a connection that stays open', async () => {
    const body = Buffer.from('{"n":1}');
    const { port, wrote } = await serve({ status: 200, fields: JSON_FIELDS(body), body }, (s) => {
      s.keepAliveTimeout = 72_000;
    });
    const { direct, node } = await bothWays(port, GET + GET + GET);
    expect(wrote).toEqual([true, true, true]);
    expect(direct.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(direct.text).toContain('Keep-Alive: timeout=72\r\n');
    expect(undated(direct.text)).toBe(undated(node.text));
    expect(direct.closed).toBe(false);
  });

  it('leaves to writeHead + end what it does not write, and Node still answers', async () => {
    const body = Buffer.from('{}');
    const cases: Array<{ answer: Answer; request?: string }> = [
      // HEAD: no body goes out.
      {
        answer: { status: 200, fields: JSON_FIELDS(body), body },
        request: 'HEAD PATH HTTP/1.1\r\nHost: x\r\n\r\n',
      },
      // A field Node manages.
      { answer: { status: 200, fields: [...JSON_FIELDS(body), 'connection', 'close'], body } },
      // No Content-Length, or a wrong one.
      { answer: { status: 200, fields: ['content-type', 'application/json'], body } },
      { answer: { status: 200, fields: ['content-length', 99], body } },
      // A status Node has no text for.
      { answer: { status: 299, fields: JSON_FIELDS(body), body } },
    ];
    for (const { answer, request } of cases) {
      const { port, wrote } = await serve(answer);
      const { direct, node } = await bothWays(port, request ?? GET);
      expect(wrote).toEqual([false]);
      expect(undated(direct.text)).toBe(undated(node.text));
      expect(direct.text).toMatch(/^HTTP\/1\.1 2\d\d /);
      await stopServer();
    }
  });

  it('writes no field Node would refuse: a value with a line break fails as writeHead fails', async () => {
    const body = Buffer.from('{}');
    let refusal: unknown;
    server = createServer((_request, response) => {
      const fields = [...JSON_FIELDS(body), 'x-injected', 'a\r\nset-cookie: b'];
      // The name was written plain before (by an answer refused for its length): its new
      // value is checked all the same.
      const plainBefore = ['x-injected', 'plain', 'content-length', body.length + 1];
      expect(endWithHead(response, 200, FIXED, plainBefore, body)).toBe(false);
      expect(endWithHead(response, 200, FIXED, fields, body)).toBe(false);
      // A fixed field Node would refuse is found once, when the fields are made.
      const badFixed = fixedFields(['x-fixed', 'a\u0000b']);
      expect(badFixed.lines).toBeUndefined();
      expect(endWithHead(response, 200, badFixed, JSON_FIELDS(body), body)).toBe(false);
      try {
        response.writeHead(200, fields);
      } catch (error) {
        refusal = error;
        response.writeHead(500, ['content-length', 0]);
      }
      response.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const { text } = await exchange(address.port, GET.replace('PATH', '/'));
    expect((refusal as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect(text).toMatch(/^HTTP\/1\.1 500 /);
    expect(text).not.toContain('set-cookie');
  });

  it('takes as a field value exactly what Node takes, character by character', () => {
    const nodeTakes = (value: string) => {
      try {
        validateHeaderValue('x', value);
        return true;
      } catch {
        return false;
      }
    };
    for (let code = 0; code <= 0x1ff; code++) {
      const char = String.fromCharCode(code);
      for (const value of [char, `a${char}`, `engine;dur=1.5${char}x`])
        expect(isPlainValue(value), `0x${code.toString(16)} in ${JSON.stringify(value)}`).toBe(
          nodeTakes(value),
        );
    }
    for (const value of ['', '"H5ebGv1iYnieCPVXMAGPFZvV70y"', 'a\r\nset-cookie: b', '€', 'é\t'])
      expect(isPlainValue(value), JSON.stringify(value)).toBe(nodeTakes(value));
  });

  it('leaves a response alone once fields are set on it, or its head is out', async () => {
    const body = Buffer.from('{}');
    server = createServer((_request, response) => {
      response.setHeader('x-set', '1');
      expect(endWithHead(response, 200, FIXED, JSON_FIELDS(body), body)).toBe(false);
      response.writeHead(200, JSON_FIELDS(body));
      expect(endWithHead(response, 200, FIXED, JSON_FIELDS(body), body)).toBe(false);
      response.end(body);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const { text } = await exchange(address.port, GET.replace('PATH', '/'));
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('x-set: 1\r\n');
    expect(text.endsWith('\r\n\r\n{}')).toBe(true);
  });
});
