/**
 * `@replix/runtime`: what every Replix process runs on, below the instance and the control
 * plane. This entry is the configuration (environment decoding, `ConfigError`, the `OTEL_*`
 * settings), the release, and the HTTP limits with the refusals Node's parser makes; it loads
 * neither the logger (`@replix/runtime/logger`) nor any OpenTelemetry code
 * (`@replix/runtime/tracing`), so a command that only reads its variables starts fast.
 */
export { ConfigError } from './config/config-error.ts';
export {
  decodeEnvironment,
  type Environment,
  environmentReference,
  type VariableOptions,
} from './config/decode-environment.ts';
export { flagVariable, hexKeyVariable } from './config/variable-codecs.ts';
export {
  clientErrorRefusal,
  clientErrorResponse,
  createClientErrorHandler,
  REFUSAL_STATUS,
  type RefusalCode,
} from './http/client-error-response.ts';
export { HTTP_LIMITS, type HttpLimits } from './http/http-limits.ts';
export { RELEASE } from './release.ts';
export {
  TRACING_VARIABLE_SCHEMAS,
  type TracingSettings,
  tracingEnvironment,
  tracingSettingsFrom,
} from './tracing/tracing-settings.ts';
