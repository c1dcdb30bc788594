import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { serviceLogger } from '@replix/runtime/logger';
import { startTracing, type TracingHandle } from '@replix/runtime/tracing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiServer } from '../src/api/api-server.ts';
import { buildApi } from '../src/api/build-api.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';

/** The checkout's root: no log line may name it (or any absolute folder). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: log records are read field by field
type LogRecord = Record<string, any>;

describe("the API's log lines", () => {
  let cp: TestControlPlane;
  let app: ApiServer;
  let tracing: TracingHandle;
  const exporter = new InMemorySpanExporter();
  const lines: string[] = [];

  beforeAll(async () => {
    cp = await startTestControlPlane('pglite');
    // Tracing on before the app is built, as a process with OTEL_* set does.
    tracing = await startTracing(
      { tracesUrl: 'http://127.0.0.1:9/v1/traces', headers: undefined, serviceName: 't' },
      { exporter },
    );
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        callback();
      },
    });
    const log = serviceLogger('replix-control-plane', 'info', stream);
    app = await buildApi({ ...cp.context, log });
    app.get('/v1/test/failure', { config: { public: true } }, async () => {
      // A line by the process's logger, not the request's: it names the request all the same.
      log.info('about to fail');
      throw new TypeError('the failure under test');
    });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await tracing?.shutdown();
    await cp?.close();
  });

  const records = (): LogRecord[] => lines.map((line) => JSON.parse(line));

  it('answers a 500 with the envelope alone and logs its frames, relative to the installation', async () => {
    const answer = await app.inject({
      method: 'GET',
      url: '/v1/test/failure',
      headers: { 'x-request-id': 'support-ticket-42' },
    });
    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toEqual({
      error: 'internal_error',
      message: 'Something went wrong on our side. It has been logged.',
    });
    expect(answer.body).not.toContain('failure under test');
    expect(answer.body).not.toContain('.ts');
    expect(answer.headers['x-request-id']).toBe('support-ticket-42');

    const failed = records().find((record) => record.msg === 'request failed') as LogRecord;
    expect(failed.reqId).toBe('support-ticket-42');
    expect(failed.err).toMatchObject({ type: 'TypeError', message: 'the failure under test' });
    expect(failed.err.frames[0]).toMatch(
      /^at .*packages\/control-plane\/test\/api-request-logs\.int\.test\.ts:\d+:\d+\)?$/,
    );
    expect(failed.err.frames.length).toBeLessThanOrEqual(8);
    const text = lines.join('\n');
    expect(text).not.toContain(ROOT);
    expect(text).not.toContain('file://');
    expect(failed).not.toHaveProperty('err.stack');
  });

  it('puts the request id, and the trace and span ids, on every line written while serving', async () => {
    lines.length = 0;
    await app.inject({ method: 'GET', url: '/v1/test/failure' });
    const own = records().find((record) => record.msg === 'about to fail') as LogRecord;
    const failed = records().find((record) => record.msg === 'request failed') as LogRecord;
    expect(own.reqId).toMatch(/^[\da-f-]{36}$/);
    expect(failed.reqId).toBe(own.reqId);
    await tracing.flush();
    const span = exporter
      .getFinishedSpans()
      .filter((s) => s.name === 'GET /v1/test/failure')
      .at(-1);
    expect(span).toBeDefined();
    expect(own).toMatchObject({
      trace_id: span?.spanContext().traceId,
      span_id: span?.spanContext().spanId,
    });
    // Client errors keep no stack.
    lines.length = 0;
    expect((await app.inject({ method: 'GET', url: '/v1/databases' })).statusCode).toBe(401);
    expect(lines.join('\n')).not.toContain('frames');
  });

  it('replaces an incoming request id that is long or not plain, and echoes the one it kept', async () => {
    for (const given of ['x'.repeat(65), 'a"b', 'two words']) {
      const answer = await app.inject({
        method: 'GET',
        url: '/v1/openapi.json',
        headers: { 'x-request-id': given },
      });
      expect(answer.headers['x-request-id']).toMatch(/^[\da-f]{8}-[\da-f-]{27}$/);
    }
  });
});
