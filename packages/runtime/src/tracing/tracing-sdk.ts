import {
  type Attributes,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_ERROR_TYPE,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
} from '@opentelemetry/semantic-conventions';
import { RELEASE } from '../release.ts';
import type { ActiveTracing, SpanKindName, SpanOptions, TraceCarrier } from './active-tracing.ts';
import type { TraceSampling, TracingSettings } from './tracing-settings.ts';

const KINDS: Record<SpanKindName, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
};

/** Attribute values past this are cut: a long query shape must not make a huge span. */
const ATTRIBUTE_VALUE_LIMIT = 2048;

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value` pairs separated by commas, values URL-encoded. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) continue;
    headers[pair.slice(0, equals).trim()] = decodeURIComponent(pair.slice(equals + 1).trim());
  }
  return headers;
}

/** `OTEL_TRACES_SAMPLER` as the SDK's sampler; the parent-based ones follow a caller's choice. */
export function samplerOf(sampling: TraceSampling): Sampler {
  switch (sampling.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(sampling.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampling.ratio) });
  }
}

/**
 * The OpenTelemetry SDK, set up for this process alone: nothing is registered globally (no
 * global tracer provider, context manager or propagator), so tracing here cannot clash with
 * another library's and turns off cleanly. Spans carry their context in our own
 * AsyncLocalStorage manager and cross processes as W3C trace context.
 */
export function startSdk(settings: TracingSettings, exporter?: SpanExporter): ActiveTracing {
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();
  // A test's exporter gets each span as it ends; a collector gets them in batches.
  const processor = exporter
    ? new SimpleSpanProcessor({ exporter })
    : new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({
          url: settings.tracesUrl,
          headers: parseHeaders(settings.headers),
        }),
        ...settings.batching,
      });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_VERSION]: RELEASE,
    }),
    spanProcessors: [processor],
    ...(settings.sampling ? { sampler: samplerOf(settings.sampling) } : {}),
    spanLimits: { attributeValueLengthLimit: ATTRIBUTE_VALUE_LIMIT },
  });
  const tracer = provider.getTracer('replix', RELEASE);

  return {
    startSpan(name: string, attributes: Attributes, options: SpanOptions): Span {
      const parent = options.parent
        ? propagator.extract(ROOT_CONTEXT, { traceparent: options.parent }, defaultTextMapGetter)
        : contexts.active();
      return tracer.startSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], attributes },
        parent,
      );
    },
    startServerSpan(name: string, headers: TraceCarrier, attributes: Attributes): Span {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    },
    runIn<T>(span: Span, fn: () => T): T {
      return contexts.with(trace.setSpan(contexts.active(), span), fn);
    },
    fail(span: Span, errorType: string): void {
      span.setAttribute(ATTR_ERROR_TYPE, errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    },
    headers(): Record<string, string> {
      const carrier: Record<string, string> = {};
      propagator.inject(contexts.active(), carrier, defaultTextMapSetter);
      return carrier;
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      contexts.disable();
    },
  };
}
