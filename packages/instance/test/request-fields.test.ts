import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { queryRequestFields } from '../src/http/request-fields.ts';

/** The request a real node:http server parses from these header lines, sent as they are. */
async function parsed(lines: string[]): Promise<IncomingMessage> {
  let seen: (request: IncomingMessage) => void = () => {};
  const received = new Promise<IncomingMessage>((resolve) => {
    seen = resolve;
  });
  const server = createServer((request, response) => {
    seen(request);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  socket.end(`GET /query HTTP/1.1\r\n${lines.map((line) => `${line}\r\n`).join('')}\r\n`);
  try {
    return await received;
  } finally {
    socket.destroy();
    server.close();
  }
}

describe('queryRequestFields', () => {
  it('reads the fields a query needs as request.headers has them, whatever their case', async () => {
    const request = await parsed([
      'Host: replix',
      'AUTHORIZATION: Bearer rxk_a.b',
      'Accept: text/event-stream',
      'If-None-Match: "x1"',
      'origin: https://app.example',
      'User-Agent: test',
    ]);
    const fields = queryRequestFields(request.rawHeaders);
    expect(fields).toEqual({
      authorization: request.headers.authorization,
      accept: request.headers.accept,
      ifNoneMatch: request.headers['if-none-match'],
      origin: request.headers.origin,
    });
    expect(fields.authorization).toBe('Bearer rxk_a.b');
  });

  it('keeps duplicates as Node does: the first Authorization, the others joined', async () => {
    const request = await parsed([
      'Host: replix',
      'Authorization: Bearer first',
      'authorization: Bearer second',
      'If-None-Match: "a"',
      'if-none-match: "b"',
      'Accept: application/json',
      'ACCEPT: text/event-stream',
    ]);
    expect(queryRequestFields(request.rawHeaders)).toEqual({
      authorization: 'Bearer first',
      accept: 'application/json, text/event-stream',
      ifNoneMatch: '"a", "b"',
      origin: undefined,
    });
    expect(request.headers.authorization).toBe('Bearer first');
    expect(request.headers['if-none-match']).toBe('"a", "b"');
    expect(request.headers.accept).toBe('application/json, text/event-stream');
  });

  it('finds nothing in a request without them', () => {
    expect(queryRequestFields(['Host', 'replix', 'Accept-Encoding', 'gzip'])).toEqual({
      authorization: undefined,
      accept: undefined,
      ifNoneMatch: undefined,
      origin: undefined,
    });
  });
});
