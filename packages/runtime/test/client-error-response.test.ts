import { describe, expect, it } from 'vitest';
import { clientErrorRefusal, clientErrorResponse } from '../src/http/client-error-response.ts';
import { HTTP_LIMITS } from '../src/http/http-limits.ts';

describe('clientErrorRefusal', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'request_header_too_large'],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'request_timeout'],
    ['HPE_INVALID_METHOD', 'bad_request'],
    ['HPE_INVALID_CHUNK_SIZE', 'bad_request'],
    [undefined, 'bad_request'],
  ])('maps %s to %s', (code, expected) => {
    expect(clientErrorRefusal({ code }, HTTP_LIMITS)?.code).toBe(expected);
  });

  it('answers nothing to a connection the client reset', () => {
    expect(clientErrorRefusal({ code: 'ECONNRESET' }, HTTP_LIMITS)).toBeNull();
  });

  it('names the limits that applied', () => {
    expect(clientErrorRefusal({ code: 'HPE_HEADER_OVERFLOW' }, HTTP_LIMITS)?.message).toBe(
      'The request line and headers are larger than 262144 bytes; send long queries with POST /query.',
    );
    expect(clientErrorRefusal({ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, HTTP_LIMITS)?.message).toBe(
      'The request was not received in time: headers within 20 s, the whole request within 30 s.',
    );
  });
});

describe('clientErrorResponse', () => {
  it('is a complete HTTP/1.1 response carrying the envelope, the version and Connection: close', () => {
    const refusal = { code: 'bad_request', message: 'Ünïcode counts in bytes.' } as const;
    const text = clientErrorResponse(refusal, '0.1.0-abc');
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head.split('\r\n')).toEqual([
      'HTTP/1.1 400 Bad Request',
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'X-Service-Version: 0.1.0-abc',
      'Access-Control-Allow-Origin: *',
      'Access-Control-Expose-Headers: x-service-version',
      'Connection: close',
    ]);
    expect(JSON.parse(body)).toEqual({ error: refusal });
  });
});
