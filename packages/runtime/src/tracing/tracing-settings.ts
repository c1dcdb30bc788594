import { type StaticDecode, Type } from 'typebox';
import { ConfigError } from '../config/config-error.ts';

/** The standard `OTEL_TRACES_SAMPLER` values (the SDK's built-in samplers). */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSamplerName = (typeof TRACE_SAMPLERS)[number];

/** Which spans are kept: the sampler's name, and the share of trace ids the ratio ones keep. */
export interface TraceSampling {
  readonly sampler: TraceSamplerName;
  /** `OTEL_TRACES_SAMPLER_ARG`, 1 unless given; read only by the `traceidratio` samplers. */
  readonly ratio: number;
}

/** The batch span processor's settings (`OTEL_BSP_*`), in the SDK's option names. */
export interface SpanBatching {
  readonly scheduledDelayMillis: number;
  readonly exportTimeoutMillis: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
}

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
  OTEL_TRACES_SAMPLER: Type.Enum([...TRACE_SAMPLERS], {
    default: 'parentbased_always_on',
    problem: `must be one of ${TRACE_SAMPLERS.join(', ')}`,
    echo: true,
    description: 'which traces are kept: every one, none, or a share of trace ids',
  }),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1,
      problem: 'must be a number from 0 to 1',
      echo: true,
      description: 'the share of traces the traceidratio samplers keep (default 1)',
    }),
  ),
  OTEL_BSP_SCHEDULE_DELAY: Type.Integer({
    minimum: 0,
    default: 5000,
    problem: 'must be a non-negative integer (milliseconds)',
    echo: true,
    description: 'milliseconds between two exports of ended spans',
  }),
  OTEL_BSP_EXPORT_TIMEOUT: Type.Integer({
    minimum: 1,
    default: 30_000,
    problem: 'must be a positive integer (milliseconds)',
    echo: true,
    description: 'milliseconds an export may take before it is given up',
  }),
  OTEL_BSP_MAX_QUEUE_SIZE: Type.Integer({
    minimum: 1,
    default: 2048,
    problem: 'must be a positive integer',
    echo: true,
    description: 'ended spans kept for export at most; more are dropped',
  }),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: Type.Integer({
    minimum: 1,
    default: 512,
    problem: 'must be a positive integer',
    echo: true,
    description: 'spans sent in one export at most (at most OTEL_BSP_MAX_QUEUE_SIZE)',
  }),
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
  /** Which traces are kept; absent: the SDK's default, `parentbased_always_on`. */
  readonly sampling?: TraceSampling;
  /** How ended spans are batched for export; absent: the SDK's defaults. */
  readonly batching?: SpanBatching;
}

/** The settings of a process whose service name is `defaultServiceName` unless set; undefined when off. */
export function tracingSettingsFrom(
  variables: TracingVariables,
  defaultServiceName: string,
): TracingSettings | undefined {
  if (variables.OTEL_TRACES_EXPORTER !== 'otlp') return undefined;
  const endpoint = variables.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '');
  if (variables.OTEL_BSP_MAX_EXPORT_BATCH_SIZE > variables.OTEL_BSP_MAX_QUEUE_SIZE)
    throw new ConfigError(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be at most OTEL_BSP_MAX_QUEUE_SIZE (${variables.OTEL_BSP_MAX_QUEUE_SIZE}), not "${variables.OTEL_BSP_MAX_EXPORT_BATCH_SIZE}".`,
    );
  return Object.freeze({
    tracesUrl: variables.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${endpoint}/v1/traces`,
    headers: variables.OTEL_EXPORTER_OTLP_HEADERS,
    serviceName: variables.OTEL_SERVICE_NAME ?? defaultServiceName,
    sampling: Object.freeze({
      sampler: variables.OTEL_TRACES_SAMPLER,
      ratio: variables.OTEL_TRACES_SAMPLER_ARG ?? 1,
    }),
    batching: Object.freeze({
      scheduledDelayMillis: variables.OTEL_BSP_SCHEDULE_DELAY,
      exportTimeoutMillis: variables.OTEL_BSP_EXPORT_TIMEOUT,
      maxQueueSize: variables.OTEL_BSP_MAX_QUEUE_SIZE,
      maxExportBatchSize: variables.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    }),
  });
}

/**
 * The variables that turn tracing on in a process this one starts (an instance), sending to the
 * same collector under the child's own default service name, sampling and batching alike.
 */
export function tracingEnvironment(settings: TracingSettings | undefined): Record<string, string> {
  if (!settings) return {};
  const { sampling, batching } = settings;
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: settings.tracesUrl,
    ...(settings.headers ? { OTEL_EXPORTER_OTLP_HEADERS: settings.headers } : {}),
    // The child keeps traces as this process does, and batches its spans alike.
    ...(sampling
      ? {
          OTEL_TRACES_SAMPLER: sampling.sampler,
          OTEL_TRACES_SAMPLER_ARG: String(sampling.ratio),
        }
      : {}),
    ...(batching
      ? {
          OTEL_BSP_SCHEDULE_DELAY: String(batching.scheduledDelayMillis),
          OTEL_BSP_EXPORT_TIMEOUT: String(batching.exportTimeoutMillis),
          OTEL_BSP_MAX_QUEUE_SIZE: String(batching.maxQueueSize),
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(batching.maxExportBatchSize),
        }
      : {}),
  };
}
