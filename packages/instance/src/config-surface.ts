/**
 * `@replix/instance/config`: the configuration and launch helpers alone, without the server,
 * the engine or the source drivers behind the package's main entry. The CLI and the control
 * plane's config import this, so a command that only reads its variables, or `serve
 * --artifact` (which runs the artifact's own bundled program), starts without loading them.
 */
export { ARTIFACT_FILES } from './artifact-manifest.ts';
export { ConfigError } from './config/config-error.ts';
export {
  decodeEnvironment,
  type Environment,
  environmentReference,
  type VariableOptions,
} from './config/decode-environment.ts';
export { flagVariable, hexKeyVariable } from './config/variable-codecs.ts';
export {
  heapFlags,
  heapIsBounded,
  INSTANCE_MALLOC_ENVIRONMENT,
  memorySizeMb,
} from './snapshot/instance-memory.ts';
export {
  TRACING_VARIABLE_SCHEMAS,
  type TracingSettings,
  tracingEnvironment,
  tracingSettingsFrom,
} from './tracing/tracing-settings.ts';
