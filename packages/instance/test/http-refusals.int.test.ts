import { connect } from 'node:net';
import { HTTP_LIMITS } from '@replix/runtime';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from './instance-helpers.ts';

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends `request` as raw bytes over TCP (so it can be malformed) and reads until the server
 * closes the connection. `halfClose` ends the sending side right after the request.
 */
function sendRaw(url: string, request: string, { halfClose = false } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The server may close while we still write an oversized request: keep what it answered.
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(text)}`));
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: text.slice(split + 4),
      });
    });
    socket.write(request);
    if (halfClose) socket.end();
  });
}

/** The refusal every Node-level error must be: the envelope, JSON, versioned, closing. */
function expectEnvelope(response: RawResponse, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(JSON.parse(response.body)).toEqual({
    error: { code, message: expect.any(String) },
  });
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['content-length']).toBe(String(Buffer.byteLength(response.body)));
  expect(response.headers['x-service-version']).toMatch(/^\d+\.\d+\.\d+-testbuild000$/);
  expect(response.headers.connection).toBe('close');
}

describe('HTTP-level refusals', () => {
  let served: TestInstance;
  let slow: TestInstance;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(
      'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);',
    );
    served = await startTestInstance(db.url);
    // The same server with timeouts short enough to wait for in a test.
    slow = await startTestInstance(
      db.url,
      {},
      {
        httpLimits: {
          ...HTTP_LIMITS,
          headers_timeout_ms: 300,
          request_timeout_ms: 400,
          timeout_check_interval_ms: 50,
        },
      },
    );
  });
  afterAll(async () => {
    await served?.close();
    await slow?.close();
  });

  it('answers a GET of a max_body_bytes query, every byte URL-encoded, without 431', async () => {
    // 64 KiB (the default query.max_body_bytes) of which almost all is a comment of `{`, each
    // sent as %7B: about 192 KiB of URL.
    const prefix = 't { id } -- ';
    const text = prefix + '{'.repeat(64 * 1024 - prefix.length);
    const response = await served.query(text, { method: 'GET' });
    expect(response.status).toBe(200);
    expect((await response.json()) as unknown).toMatchObject({ data: [{ id: 1 }] });
  });

  it('answers 431 request_header_too_large with the envelope over the header limit', async () => {
    const pad = 'a'.repeat(HTTP_LIMITS.max_header_bytes + 1024);
    const response = await sendRaw(
      served.url,
      `GET /query?q=${pad} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${served.key}\r\n\r\n`,
    );
    expectEnvelope(response, 431, 'request_header_too_large');
    expect(JSON.parse(response.body).error.message).toContain('POST');
  });

  it('answers 431 for one oversized header as well as for a long URL', async () => {
    const response = await sendRaw(
      served.url,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'b'.repeat(HTTP_LIMITS.max_header_bytes)}\r\n\r\n`,
    );
    expectEnvelope(response, 431, 'request_header_too_large');
  });

  it.each([
    ['a malformed request line', 'NOT AN HTTP REQUEST\r\n\r\n'],
    ['a bad header line', 'GET /health HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n'],
    ['an invalid method', 'G@T /health HTTP/1.1\r\nHost: x\r\n\r\n'],
    [
      'a malformed chunked body',
      'POST /query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
    ],
  ])('answers 400 bad_request with the envelope for %s', async (_name, request) => {
    expectEnvelope(await sendRaw(served.url, request), 400, 'bad_request');
  });

  it('answers 408 request_timeout with the envelope to headers that never finish', async () => {
    const response = await sendRaw(slow.url, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expectEnvelope(response, 408, 'request_timeout');
  });

  it('answers 408 request_timeout to a body that never finishes', async () => {
    const response = await sendRaw(
      slow.url,
      `POST /query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slow.key}\r\nContent-Length: 100\r\n\r\nt { id }`,
    );
    expectEnvelope(response, 408, 'request_timeout');
  });

  it('answers 400 bad_request to a body cut short by the client closing its side', async () => {
    const response = await sendRaw(
      served.url,
      `POST /query HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${served.key}\r\nContent-Length: 100\r\n\r\nt { id }`,
      { halfClose: true },
    );
    expectEnvelope(response, 400, 'bad_request');
  });

  it('keeps serving after every refusal', async () => {
    const response = await served.query('t { id }');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-service-version')).toMatch(/-testbuild000$/);
  });
});
