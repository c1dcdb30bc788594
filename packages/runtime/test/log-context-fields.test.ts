import { Writable } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { runWithRequestId, serviceLogger, wellFormedRequestId } from '../src/service-logger.ts';
import { inSpan, startTracing, type TracingHandle } from '../src/tracing-surface.ts';

/** A logger writing into `lines`, each as its raw text (duplicate keys would show there). */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { lines, log: serviceLogger('replix-test', 'info', stream) };
}

const flushed = () => new Promise((resolve) => setImmediate(resolve));

let handle: TracingHandle | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
});

describe('the fields a log line gets from where it is written', () => {
  it("names the request being served on every logger's lines, once", async () => {
    const { lines, log } = capture();
    log.info('before');
    runWithRequestId('req-7', () => {
      log.info('by the root logger');
      log.child({ role: 'x' }).info('by a child');
      log.child({ reqId: 'req-7' }).info("by the request's own logger");
    });
    await flushed();
    const records = lines.map((line) => JSON.parse(line));
    expect(records[0]).not.toHaveProperty('reqId');
    for (const record of records.slice(1)) expect(record.reqId).toBe('req-7');
    for (const line of lines) expect(line.split('"reqId"').length).toBeLessThanOrEqual(2);
    expect(records.some((record) => 'trace_id' in record)).toBe(false);
  });

  it('carries the active span’s trace and span ids when tracing is on', async () => {
    const exporter = new InMemorySpanExporter();
    handle = await startTracing(
      { tracesUrl: 'http://127.0.0.1:9/v1/traces', headers: undefined, serviceName: 't' },
      { exporter },
    );
    const { lines, log } = capture();
    await inSpan('goal pass', {}, async () => {
      log.info('inside');
    });
    log.info('outside');
    await flushed();
    const [inside, outside] = lines.map((line) => JSON.parse(line));
    const span = exporter.getFinishedSpans()[0];
    expect(inside).toMatchObject({
      trace_id: span?.spanContext().traceId,
      span_id: span?.spanContext().spanId,
    });
    expect(inside.trace_id).toMatch(/^[\da-f]{32}$/);
    expect(outside).not.toHaveProperty('trace_id');
  });

  it('keeps an incoming request id only when it is short and plain', () => {
    expect(wellFormedRequestId('abc-DEF_123')).toBe(true);
    expect(wellFormedRequestId('x'.repeat(64))).toBe(true);
    expect(wellFormedRequestId('x'.repeat(65))).toBe(false);
    expect(wellFormedRequestId('a"b')).toBe(false);
    expect(wellFormedRequestId('a b\nc')).toBe(false);
    expect(wellFormedRequestId('')).toBe(false);
    expect(wellFormedRequestId(['a', 'b'])).toBe(false);
  });
});
