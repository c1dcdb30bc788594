import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, with the service that sent it. */
export interface CollectedSpan {
  readonly service: string | undefined;
  readonly name: string;
  /** Hex, as OTLP JSON writes ids. */
  readonly traceId: string;
  readonly parentSpanId: string | undefined;
  readonly attributes: Readonly<Record<string, unknown>>;
}

export interface OtlpCollector {
  /** The OTLP/HTTP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`); spans are posted to its /v1/traces. */
  readonly url: string;
  /** Every span posted so far, in arrival order. */
  readonly spans: CollectedSpan[];
  /** The headers of each export request. */
  readonly exports: IncomingHttpHeaders[];
  close(): Promise<void>;
}

interface OtlpValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}

function attributeValue(value: OtlpValue): unknown {
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

function attributesOf(list: Array<{ key: string; value: OtlpValue }> = []) {
  return Object.fromEntries(list.map(({ key, value }) => [key, attributeValue(value)]));
}

/**
 * A loopback stand-in for an OpenTelemetry collector: answers every OTLP/HTTP JSON export of
 * spans (POST /v1/traces) with 200 and keeps the spans, so a test can check what a real
 * exporter sent, from this process or another.
 */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: CollectedSpan[] = [];
  const exports: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        exports.push(request.headers);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resource of body.resourceSpans ?? []) {
          const service = attributesOf(resource.resource?.attributes)['service.name'];
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              spans.push({
                service: typeof service === 'string' ? service : undefined,
                name: span.name,
                traceId: span.traceId,
                parentSpanId: span.parentSpanId || undefined,
                attributes: attributesOf(span.attributes),
              });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
