import { request } from 'node:http';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing, type TracingHandle } from '@replix/runtime/tracing';
import { startOtlpCollector } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestInstance, type TestInstance } from './instance-helpers.ts';

const TABLE = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, card VARCHAR(20));
  INSERT INTO customers VALUES (1, 'Ada', '4111-1111'), (2, 'Grace', NULL), (3, 'Linus', NULL);
`;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

describe('instance spans', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: TracingHandle;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let instance: TestInstance;

  beforeAll(async () => {
    // On before the server is built: an instance traces requests only when tracing is on then.
    tracing = await startTracing(
      { tracesUrl: 'http://127.0.0.1:9/v1/traces', headers: undefined, serviceName: 'test' },
      { exporter },
    );
    source = await testMariaDb().createDatabase(TABLE);
    instance = await startTestInstance(source.url);
  });
  afterAll(async () => {
    await instance?.close();
    await source?.drop();
    await tracing?.shutdown();
  });

  /** The spans ended since the last call. */
  function takeSpans(): ReadableSpan[] {
    const spans = exporter.getFinishedSpans();
    exporter.reset();
    return spans;
  }

  it('gives a query a server span continuing the caller’s trace, with its shape and results', async () => {
    takeSpans();
    const response = await instance.query(
      "customers (name LIKE 'A%' OR card = '4111-1111') { id name } ORDER BY id LIMIT 2",
      { headers: { traceparent: TRACEPARENT } },
    );
    const body = await json(response);
    expect(body.error ?? response.status).toBe(200);
    expect(body.data).toEqual([{ id: 1, name: 'Ada' }]);

    const [span, ...others] = takeSpans();
    expect(others).toEqual([]);
    expect(span?.name).toBe('POST /query');
    expect(span?.kind).toBe(1); // SERVER
    expect(span?.spanContext().traceId).toBe(TRACE_ID);
    expect(span?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span?.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/query',
      'http.response.status_code': 200,
      'replix.query.shape': 'customers ( name LIKE ? OR card = ? ) { id name } ORDER BY id LIMIT ?',
      'replix.query.rows': 1,
      'replix.query.response_bytes': Number(response.headers.get('content-length')),
      'replix.query.engine_ms': body.meta.timing_ms,
    });
    // Nothing the caller wrote is in the span: neither values nor the key.
    const recorded = JSON.stringify(span?.attributes);
    for (const secret of ['A%', '4111', instance.key]) expect(recorded).not.toContain(secret);
  });

  it('starts a trace for a query without traceparent, and records a refused one by its code', async () => {
    takeSpans();
    const response = await instance.query("customers (nope = 'x') { id }", { method: 'GET' });
    expect(response.status).toBe(400);
    const [span] = takeSpans();
    expect(span?.name).toBe('GET /query');
    expect(span?.parentSpanContext).toBeUndefined();
    expect(span?.attributes['http.response.status_code']).toBe(400);
    expect(span?.attributes['error.type']).toBe((await json(response)).error.code);
    expect(span?.attributes['replix.query.shape']).toBe('customers ( nope = ? ) { id }');
    // A 4xx is the caller's mistake, not a failed span.
    expect(span?.status.code).toBe(0);
  });

  it('traces other requests only when they continue a trace (the control plane’s, not the polls)', async () => {
    takeSpans();
    expect((await fetch(`${instance.url}/health`)).status).toBe(200);
    expect(takeSpans()).toEqual([]);
    const health = await fetch(`${instance.url}/health`, { headers: { traceparent: TRACEPARENT } });
    expect(health.status).toBe(200);
    const [span] = takeSpans();
    expect(span?.name).toBe('GET /health');
    expect(span?.spanContext().traceId).toBe(TRACE_ID);
  });

  it('fails the span of a request whose client leaves before the answer is out', async () => {
    takeSpans();
    // A live query's answer is a stream that stays open: its client leaves mid-answer. A GET has
    // no body, so the server closes its request stream as it arrives and only the response can
    // tell that the client left.
    const path = `/query?q=${encodeURIComponent('customers { id }')}`;
    await new Promise<void>((resolve, reject) => {
      const sent = request(
        `${instance.url}${path}`,
        {
          agent: false,
          headers: { authorization: `Bearer ${instance.key}`, accept: 'text/event-stream' },
        },
        (response) => {
          expect(response.statusCode).toBe(200);
          response.once('data', () => {
            response.destroy();
            resolve();
          });
        },
      );
      sent.on('error', reject);
      sent.end();
    });
    await expect.poll(() => exporter.getFinishedSpans().length, { timeout: 5000 }).toBe(1);
    const [span] = takeSpans();
    expect(span?.name).toBe('GET /query');
    expect(span?.attributes['error.type']).toBe('aborted');
    expect(span?.status.code).toBe(2); // ERROR
  });
});

/** A query on a connection of its own (the kernel spreads connections over the query threads). */
function queryOnNewConnection(url: string, key: string, text: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${url}/query`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    sent.on('error', reject);
    sent.end(text);
  });
}

describe('instance spans with query threads', () => {
  it('every thread exports the spans of the queries it answers', async () => {
    const collector = await startOtlpCollector();
    const source = await testMariaDb().createDatabase(TABLE);
    try {
      const instance = await startTestInstance(
        source.url,
        {},
        {
          threads: 2,
          tracing: {
            tracesUrl: `${collector.url}/v1/traces`,
            headers: undefined,
            serviceName: 'replix-instance',
          },
        },
      );
      const QUERIES = 20;
      try {
        for (let i = 0; i < QUERIES; i++) {
          expect(await queryOnNewConnection(instance.url, instance.key, 'customers { id }')).toBe(
            200,
          );
        }
      } finally {
        // Each thread exports what it has left as it closes.
        await instance.close();
      }
      const queries = collector.spans.filter((span) => span.name === 'POST /query');
      expect(queries).toHaveLength(QUERIES);
      for (const span of queries) {
        expect(span.service).toBe('replix-instance');
        expect(span.attributes['replix.query.shape']).toBe('customers { id }');
      }
    } finally {
      await source.drop();
      await collector.close();
    }
  });
});
