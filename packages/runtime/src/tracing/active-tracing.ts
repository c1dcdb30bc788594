import type { Attributes, Span } from '@opentelemetry/api';

/** Headers a span is continued from (incoming) or written into (outgoing): `traceparent`, `tracestate`. */
export type TraceCarrier = Record<string, string | string[] | undefined>;

export type SpanKindName = 'server' | 'client' | 'internal';

export interface SpanOptions {
  readonly kind?: SpanKindName;
  /** A W3C `traceparent` to continue instead of the active span (a goal recorded by a request). */
  readonly parent?: string | undefined;
}

/** The running SDK (tracing-sdk.ts), loaded only when tracing is turned on. */
export interface ActiveTracing {
  startSpan(name: string, attributes: Attributes, options: SpanOptions): Span;
  /** A server span continuing the trace of an incoming request's headers (or a new trace). */
  startServerSpan(name: string, headers: TraceCarrier, attributes: Attributes): Span;
  runIn<T>(span: Span, fn: () => T): T;
  /** Marks the span failed with `error.type` (a code or class name, never a message). */
  fail(span: Span, errorType: string): void;
  /** The active span's context as headers; empty when there is none. */
  headers(): Record<string, string>;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}
