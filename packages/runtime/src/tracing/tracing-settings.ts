import { type StaticDecode, Type } from 'typebox';

const OTLP_URL = {
  pattern: '^https?://',
  problem: 'must be an http:// or https:// URL',
  echo: true,
};

/**
 * The OpenTelemetry variables a Replix process reads (docs/tracing.md): the standard names, so
 * a collector's usual settings work, declared here so they are checked and documented like the
 * rest. Tracing is off unless `OTEL_TRACES_EXPORTER` is `otlp`.
 */
export const TRACING_VARIABLE_SCHEMAS = {
  OTEL_TRACES_EXPORTER: Type.Enum(['none', 'otlp'], {
    default: 'none',
    problem: 'must be none or otlp',
    echo: true,
    description: 'otlp: send traces to an OpenTelemetry collector over OTLP/HTTP',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.String({
    ...OTLP_URL,
    default: 'http://localhost:4318',
    description: "the collector's OTLP/HTTP address; traces go to its /v1/traces",
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(
    Type.String({ ...OTLP_URL, description: 'the whole traces URL, in place of the one above' }),
  ),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(
    Type.String({
      description: 'headers sent with each export, name=value pairs separated by commas',
    }),
  ),
  OTEL_SERVICE_NAME: Type.Optional(
    Type.String({
      minLength: 1,
      problem: 'must not be empty',
      description: 'the service.name of the spans',
    }),
  ),
};

const TRACING_VARIABLES = Type.Object(TRACING_VARIABLE_SCHEMAS);
type TracingVariables = StaticDecode<typeof TRACING_VARIABLES>;

/** Where and as what a process exports its spans; undefined settings: tracing is off. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly tracesUrl: string;
  /** `OTEL_EXPORTER_OTLP_HEADERS` as given (it may hold a collector's token: never logged). */
  readonly headers: string | undefined;
  readonly serviceName: string;
}

/** The settings of a process whose service name is `defaultServiceName` unless set; undefined when off. */
export function tracingSettingsFrom(
  variables: TracingVariables,
  defaultServiceName: string,
): TracingSettings | undefined {
  if (variables.OTEL_TRACES_EXPORTER !== 'otlp') return undefined;
  const endpoint = variables.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '');
  return Object.freeze({
    tracesUrl: variables.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${endpoint}/v1/traces`,
    headers: variables.OTEL_EXPORTER_OTLP_HEADERS,
    serviceName: variables.OTEL_SERVICE_NAME ?? defaultServiceName,
  });
}

/**
 * The variables that turn tracing on in a process this one starts (an instance), sending to the
 * same collector under the child's own default service name.
 */
export function tracingEnvironment(settings: TracingSettings | undefined): Record<string, string> {
  if (!settings) return {};
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: settings.tracesUrl,
    ...(settings.headers ? { OTEL_EXPORTER_OTLP_HEADERS: settings.headers } : {}),
  };
}
