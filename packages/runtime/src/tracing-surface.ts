/**
 * `@replix/runtime/tracing`: OpenTelemetry traces for every Replix process (docs/tracing.md).
 * Importing this loads no OpenTelemetry code: the SDK is loaded by `startTracing` alone, and
 * until then every helper is a no-op. The `OTEL_*` variables and their settings are in
 * `@replix/runtime`.
 */
export { type RequestSpanOptions, requestSpan, traceRequests } from './tracing/request-spans.ts';
export {
  type ActiveTracing,
  type Attributes,
  currentTraceparent,
  errorType,
  inSpan,
  type Span,
  type SpanOptions,
  startTracing,
  type TracingHandle,
  tracingActive,
  withTraceHeaders,
} from './tracing/tracing.ts';
export type { TracingSettings } from './tracing/tracing-settings.ts';
