import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startOtlpCollector } from '@replix/testkit';
import { Type } from 'typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeEnvironment, type Environment } from '../src/config/decode-environment.ts';
import {
  TRACING_VARIABLE_SCHEMAS,
  tracingEnvironment,
  tracingSettingsFrom,
} from '../src/tracing/tracing-settings.ts';
import {
  currentTraceparent,
  inSpan,
  startTracing,
  type TracingHandle,
  tracingActive,
  withTraceHeaders,
} from '../src/tracing-surface.ts';

const SETTINGS = {
  tracesUrl: 'http://127.0.0.1:9/v1/traces',
  headers: undefined,
  serviceName: 't',
};

/** The `OTEL_*` variables as a process decodes them from `env`. */
const tracingVariables = (env: Environment) =>
  decodeEnvironment(Type.Object(TRACING_VARIABLE_SCHEMAS), env);

let handle: TracingHandle | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
});

describe('tracing off (the default)', () => {
  it('is off unless OTEL_TRACES_EXPORTER is otlp', () => {
    const variables = tracingVariables({});
    expect(tracingSettingsFrom(variables, 'replix-instance')).toBeUndefined();
    expect(tracingEnvironment(undefined)).toEqual({});
    expect(
      tracingSettingsFrom(
        {
          ...variables,
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/',
        },
        'replix-instance',
      ),
    ).toEqual({
      tracesUrl: 'http://c:4318/v1/traces',
      headers: undefined,
      serviceName: 'replix-instance',
      sampling: { sampler: 'parentbased_always_on', ratio: 1 },
      batching: {
        scheduledDelayMillis: 5000,
        exportTimeoutMillis: 30_000,
        maxQueueSize: 2048,
        maxExportBatchSize: 512,
      },
    });
  });

  it('leaves headers alone and runs work without a span', async () => {
    expect(tracingActive()).toBe(false);
    const headers = { authorization: 'Bearer k' };
    expect(withTraceHeaders(headers)).toBe(headers);
    expect(currentTraceparent()).toBeUndefined();
    expect(await inSpan('work', {}, async (span) => span)).toBeUndefined();
  });
});

describe('tracing on', () => {
  it('nests spans, propagates traceparent and marks failures by code only', async () => {
    const exporter = new InMemorySpanExporter();
    handle = await startTracing(SETTINGS, { exporter });
    let outgoing: Record<string, string> = {};
    await inSpan('outer', { 'replix.step': 'a' }, async () => {
      await inSpan('inner', {}, async () => {
        outgoing = withTraceHeaders({ accept: 'application/json' });
      });
    });
    const failure = Object.assign(new Error('password=hunter2 at db.internal'), { code: 'E_BAD' });
    await expect(
      inSpan('failing', {}, async () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    // A goal's stored traceparent is continued later, outside the request's context.
    const [outer, inner] = ['outer', 'inner'].map((name) =>
      exporter.getFinishedSpans().find((span) => span.name === name),
    );
    const traceparent = `00-${outer?.spanContext().traceId}-${outer?.spanContext().spanId}-01`;
    await inSpan('later', {}, async () => {}, { parent: traceparent });

    const spans = exporter.getFinishedSpans();
    expect(inner?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(outgoing.accept).toBe('application/json');
    expect(outgoing.traceparent).toBe(
      `00-${inner?.spanContext().traceId}-${inner?.spanContext().spanId}-01`,
    );
    const failing = spans.find((span) => span.name === 'failing');
    expect(failing?.status.code).toBe(2);
    expect(failing?.attributes['error.type']).toBe('E_BAD');
    expect(JSON.stringify(failing?.attributes)).not.toContain('hunter2');
    expect(failing?.events).toEqual([]);
    const later = spans.find((span) => span.name === 'later');
    expect(later?.spanContext().traceId).toBe(outer?.spanContext().traceId);
    expect(later?.parentSpanContext?.spanId).toBe(outer?.spanContext().spanId);
    expect(currentTraceparent()).toBeUndefined();
  });

  it('is started once when two starts race, and the second leaves it to the first', async () => {
    const exporter = new InMemorySpanExporter();
    const [first, second] = await Promise.all([
      startTracing(SETTINGS, { exporter }),
      startTracing(SETTINGS, { exporter: new InMemorySpanExporter() }),
    ]);
    handle = first;
    await second.shutdown();
    expect(tracingActive()).toBe(true);
    await inSpan('one', {}, async () => {});
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['one']);
  });

  it('posts spans to an OTLP/HTTP collector with the configured headers', async () => {
    const collector = await startOtlpCollector();
    try {
      const settings = tracingSettingsFrom(
        tracingVariables({
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token',
          OTEL_SERVICE_NAME: 'replix-test',
        }),
        'replix-instance',
      );
      if (!settings) throw new Error('tracing should be on');
      handle = await startTracing(settings);
      await inSpan('exported work', { 'replix.step': 'one' }, async () => {});
      await handle.flush();
      expect(collector.exports).toHaveLength(1);
      expect(collector.exports[0]?.['content-type']).toBe('application/json');
      expect(collector.exports[0]?.authorization).toBe('Bearer collector-token');
      expect(collector.spans).toEqual([
        {
          service: 'replix-test',
          name: 'exported work',
          traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
          parentSpanId: undefined,
          attributes: { 'replix.step': 'one' },
        },
      ]);
    } finally {
      await handle?.shutdown();
      handle = undefined;
      await collector.close();
    }
  });
});
