import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { startTracing, type TracingHandle } from '@replix/runtime/tracing';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EndpointRouter } from '../src/adapters/drivers/process/endpoint-router.ts';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CALLER = `00-${TRACE_ID}-b7ad6b7169203331-01`;

let handle: TracingHandle | undefined;
let router: EndpointRouter | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await router?.closeAll();
  for (const server of servers.splice(0)) server.close();
  await handle?.shutdown();
  handle = undefined;
});

/** A stand-in instance that keeps the headers of each request it gets. */
async function instance(seen: IncomingHttpHeaders[], status = 200): Promise<string> {
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(status).end('ok');
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

describe("the endpoint router's spans", () => {
  it('adds nothing with tracing off: the caller’s traceparent goes through as it came', async () => {
    const seen: IncomingHttpHeaders[] = [];
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    router.route('db', 'inst', [await instance(seen)]);
    await fetch(`http://127.0.0.1:${port}/query?q=x`, { headers: { traceparent: CALLER } });
    expect(seen[0]?.traceparent).toBe(CALLER);
  });

  it('with tracing on, makes a server span per request in the caller’s trace, parent of the instance’s', async () => {
    const exporter = new InMemorySpanExporter();
    handle = await startTracing(
      { tracesUrl: 'http://127.0.0.1:9/v1/traces', headers: undefined, serviceName: 'router' },
      { exporter },
    );
    const seen: IncomingHttpHeaders[] = [];
    router = new EndpointRouter({ log: pino({ level: 'silent' }) });
    const port = await router.open('db', null);
    router.route('db', 'inst', [await instance(seen)]);
    const answer = await fetch(`http://127.0.0.1:${port}/query?q=secret`, {
      headers: { traceparent: CALLER },
    });
    await answer.text();
    router.unroute('db', 'Paused.');
    await (await fetch(`http://127.0.0.1:${port}/query`)).text();
    await handle.flush();
    const [routed, unrouted] = exporter.getFinishedSpans();
    expect(routed?.name).toBe('endpoint GET');
    expect(routed?.spanContext().traceId).toBe(TRACE_ID);
    expect(routed?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(routed?.attributes).toEqual({
      'http.request.method': 'GET',
      'replix.instance.id': 'inst',
      'http.response.status_code': 200,
    });
    // The instance continues the router's span, not the caller's.
    expect(seen[0]?.traceparent).toBe(`00-${TRACE_ID}-${routed?.spanContext().spanId}-01`);
    // A 503 while unrouted fails its span by its status; no URL or query text anywhere.
    expect(unrouted?.attributes['http.response.status_code']).toBe(503);
    expect(unrouted?.attributes['error.type']).toBe('503');
    expect(
      JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes)),
    ).not.toContain('secret');
  });
});
