import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { tracingEnvironment, tracingSettingsFrom } from '../src/config-surface.ts';
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

let handle: TracingHandle | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
});

describe('tracing off (the default)', () => {
  it('is off unless OTEL_TRACES_EXPORTER is otlp', () => {
    const variables = {
      OTEL_TRACES_EXPORTER: 'none' as const,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_HEADERS: undefined,
      OTEL_SERVICE_NAME: undefined,
    };
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

  it('posts spans to an OTLP/HTTP collector with the configured headers', async () => {
    const received: Array<{ url: string; headers: IncomingHttpHeaders; body: string }> = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          url: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const { port } = collector.address() as AddressInfo;
      const settings = tracingSettingsFrom(
        {
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
          OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token',
          OTEL_SERVICE_NAME: 'replix-test',
        },
        'replix-instance',
      );
      if (!settings) throw new Error('tracing should be on');
      handle = await startTracing(settings);
      await inSpan('exported work', { 'replix.step': 'one' }, async () => {});
      await handle.flush();
      expect(received).toHaveLength(1);
      const [post] = received;
      expect(post?.url).toBe('/v1/traces');
      expect(post?.headers['content-type']).toBe('application/json');
      expect(post?.headers.authorization).toBe('Bearer collector-token');
      const body = JSON.parse(post?.body ?? '{}');
      const [resourceSpans] = body.resourceSpans;
      expect(resourceSpans.resource.attributes).toContainEqual({
        key: 'service.name',
        value: { stringValue: 'replix-test' },
      });
      const spans = resourceSpans.scopeSpans.flatMap((scope: { spans: unknown[] }) => scope.spans);
      expect(spans.map((span: { name: string }) => span.name)).toEqual(['exported work']);
    } finally {
      await handle?.shutdown();
      handle = undefined;
      collector.close();
    }
  });
});
