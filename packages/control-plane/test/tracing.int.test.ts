import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing, type TracingHandle } from '@replix/runtime/tracing';
import { type OtlpCollector, startOtlpCollector } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { caller, insertConnection, reachStatus, sourceFromUrl } from './lifecycle-fixtures.ts';
import { eventually, killInstanceProcesses } from './reconciler-fixtures.ts';

// A build and a deploy take seconds each; a slow machine gets room.
vi.setConfig({ testTimeout: 180_000 });

const SHOP = `
  CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
  INSERT INTO item VALUES (1, 'one'), (2, 'two');
`;
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';

describe('one trace from a provision request to the instance', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: TracingHandle;
  let collector: OtlpCollector;
  let source: Awaited<ReturnType<ReturnType<typeof testMariaDb>['createDatabase']>>;
  let cp: TestControlPlane;

  beforeAll(async () => {
    collector = await startOtlpCollector();
    // This process's spans go to memory; the instances' (own processes) to the collector, as
    // the control plane's OTEL_* settings tell them.
    tracing = await startTracing(
      { tracesUrl: `${collector.url}/v1/traces`, headers: undefined, serviceName: 'test' },
      { exporter },
    );
    source = await testMariaDb().createDatabase(SHOP);
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      env: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    });
  });
  afterAll(async () => {
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await source?.drop();
    await tracing?.shutdown();
    await collector?.close();
  });

  it('runs through the API, the reconciler, the driver and the instance', async () => {
    const { token, accountId } = await caller(cp, 'tracing@example.com', 'business');
    const connectionId = await insertConnection(cp, { accountId }, sourceFromUrl(source.url));
    const created = await cp.request('POST', '/v1/databases', {
      token,
      body: {
        name: 'traced',
        connectionId,
        sourceSchema: source.name,
        schemaConfig: {},
      },
    });
    expect(created.status).toBe(201);
    const databaseId: string = created.body.id;
    const provision = await cp.request('POST', `/v1/databases/${databaseId}/provision`, {
      token,
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    });
    expect(provision.status).toBe(202);
    await reachStatus(cp, token, databaseId, 'running');

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE_ID);
    const named = (name: string) => spans.filter((span) => span.name === name);
    const parentOf = (span: ReadableSpan | undefined) =>
      spans.find((s) => s.spanContext().spanId === span?.parentSpanContext?.spanId);

    const [request] = named('POST /v1/databases/:id/provision');
    expect(request?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(request?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/databases/:id/provision',
      'http.response.status_code': 202,
    });
    // The goal ran later, in the reconciler, and continued the request's trace.
    const passes = named('reconcile provision');
    expect(passes.length).toBeGreaterThan(0);
    for (const pass of passes) expect(parentOf(pass)).toBe(request);
    expect(passes.map((pass) => pass.attributes['replix.goal.phase'])).toContain('start');

    // The build continued the trace too: the goal that queued it kept the request's traceparent.
    const [build] = named('build');
    expect(parentOf(build)).toBe(request);
    expect(build?.attributes).toMatchObject({
      'replix.database.id': databaseId,
      'replix.build.id': expect.stringMatching(/^[0-9a-f-]{36}$/),
      'replix.build.outcome': 'succeeded',
    });
    for (const step of [
      'build introspect',
      'build compile',
      'build bundle',
      'build write artifact',
    ])
      expect(parentOf(named(step)[0])).toBe(build);
    expect(named('build introspect')[0]?.attributes['replix.build.tables']).toBe(1);

    const [start] = named('deploy start');
    expect(passes).toContain(parentOf(start));
    const [driverStart] = named('driver.start');
    expect(parentOf(driverStart)).toBe(start);
    expect(driverStart?.attributes['replix.driver']).toBe('process');
    const [driverRoute] = named('driver.route');
    expect(parentOf(driverRoute)?.name).toBe('deploy switch');

    // Nothing of the source (host, user, password, URL) nor a key is in any span.
    const recorded = JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes));
    for (const secret of ['mysql://', source.name, new URL(source.url).port, token])
      expect(recorded).not.toContain(secret);

    // The instance (its own process) continued the trace from the health checks it answered,
    // and sent its spans to the collector as replix-instance.
    const ours = new Set(spans.map((span) => span.spanContext().spanId));
    const answered = await eventually(
      async () => {
        const found = collector.spans.filter(
          (span) => span.traceId === TRACE_ID && span.name === 'GET /health',
        );
        return found.length > 0 ? found : undefined;
      },
      30_000,
      "the instance's spans at the collector",
    );
    for (const span of answered) {
      expect(span.service).toBe('replix-instance');
      expect(ours.has(span.parentSpanId ?? '')).toBe(true);
    }
  });

  it('makes no span for the probes’ polls', async () => {
    exporter.reset();
    expect((await cp.request('GET', '/live')).status).toBe(200);
    expect((await cp.request('GET', '/v1/databases')).status).toBe(401);
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['GET /v1/databases']);
  });
});
