import type { Attributes, Span } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import type { ActiveTracing, SpanOptions } from './active-tracing.ts';
import type { TracingSettings } from './tracing-settings.ts';

export type { ActiveTracing, SpanOptions } from './active-tracing.ts';
export type { Attributes, Span };

export interface TracingHandle {
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is left and turns tracing off. */
  shutdown(): Promise<void>;
}

/**
 * Every span goes through here. Off (the default) it is undefined and each helper below is one
 * branch: no SDK is loaded, no span object made, requests pay nothing.
 */
let active: ActiveTracing | undefined;
/** A start under way (the SDK loading): a second start at the same time waits for it. */
let starting: Promise<ActiveTracing> | undefined;

export function tracingActive(): boolean {
  return active !== undefined;
}

/** For modules that keep per-request spans (request-spans.ts): the SDK when tracing is on. */
export function activeTracing(): ActiveTracing | undefined {
  return active;
}

/**
 * Turns tracing on for this process (thread): loads the SDK and sends spans to the settings'
 * collector, or to `exporter` (tests: an `InMemorySpanExporter`, spans exported as they end).
 * Tracing already on stays as it is, and the handle returned leaves it to its owner.
 */
export async function startTracing(
  settings: TracingSettings,
  options: { readonly exporter?: SpanExporter } = {},
): Promise<TracingHandle> {
  if (starting) await starting;
  const current = active;
  if (current) return { flush: () => current.flush(), shutdown: async () => {} };
  starting = import('./tracing-sdk.ts')
    .then(({ startSdk }) => {
      active = startSdk(settings, options.exporter);
      return active;
    })
    .finally(() => {
      starting = undefined;
    });
  const started = await starting;
  return {
    flush: () => started.flush(),
    async shutdown() {
      if (active === started) active = undefined;
      await started.shutdown();
    },
  };
}

/** An error's `error.type`: its stable code when it has one, else its class. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : typeof error;
}

/**
 * Runs `fn` in a span (a child of the active one, or of `options.parent`), ended when `fn`
 * settles and failed when it throws; with tracing off, just runs `fn`.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  const tracing = active;
  if (!tracing) return fn(undefined);
  const span = tracing.startSpan(name, attributes, options);
  return tracing.runIn(span, () =>
    fn(span).then(
      (value) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        tracing.fail(span, errorType(error));
        span.end();
        throw error;
      },
    ),
  );
}

/** `headers` with the active span's `traceparent` added, so the server called continues the trace. */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  return active ? { ...headers, ...active.headers() } : headers;
}

/** The active span's `traceparent`, to continue its trace later (a queued goal); undefined when off. */
export function currentTraceparent(): string | undefined {
  return active?.headers().traceparent;
}

/** What a log line carries of the active span: its trace's and its own id. */
export interface TraceLogFields {
  readonly trace_id: string;
  readonly span_id: string;
}

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;

/**
 * The active span's ids for a log line, so a line finds its trace and a trace its lines;
 * undefined with tracing off (one branch) or outside any span.
 */
export function activeTraceLogFields(): TraceLogFields | undefined {
  const traceparent = active?.headers().traceparent;
  const ids = traceparent ? TRACEPARENT.exec(traceparent) : null;
  return ids ? { trace_id: ids[1] as string, span_id: ids[2] as string } : undefined;
}
