export { ENGINE_ERRORS, EngineError, type EngineErrorCode, SchemaConfigError } from './errors.ts';
export type { QueryAnswer } from './exec/json-writer.ts';
export type { QueryPlan } from './exec/plan.ts';
export { planTables } from './exec/plan-tables.ts';
export { type CancelSignal, QueryCancelledError, type QueryLimits } from './exec/query-budget.ts';
export { QUERY_LIMITS } from './exec/query-limits.ts';
export { SizedCache, type SizedCacheOptions } from './exec/sized-cache.ts';
export {
  DEFAULT_LIMIT,
  type ExecuteOptions,
  PLAN_CACHE_BYTES,
  PLAN_CACHE_MAX_ENTRY_BYTES,
  PLAN_TEXT_CACHE_BYTES,
  QueryEngine,
  type ResponseMeta,
} from './query-engine.ts';
export { compileSchema, forwardName as forwardRelationName } from './schema/compile-schema.ts';
export type {
  CompiledColumn,
  CompiledRelation,
  CompiledSchema,
  CompiledTable,
} from './schema/compiled-schema.ts';
export { defaultSchemaConfig, parseSchemaConfig } from './schema/schema-config.ts';
export {
  QUERY_DEFAULTS,
  type SchemaConfig,
  type SchemaConfigInput,
  schemaConfigJsonSchema,
} from './schema/schema-config-schema.ts';
export type {
  ColumnType,
  ElementType,
  ForeignKeyRule,
  SourceColumn,
  SourceForeignKey,
  SourceSchema,
  SourceTable,
  SourceTableKind,
} from './source-schema.ts';
export type { RowChange } from './storage/apply-changes.ts';
export { daysFromCivil, epochMicros, timestampText } from './storage/civil-date.ts';
export { canonicalToComparable } from './storage/comparable.ts';
export { Generation } from './storage/generation.ts';
export {
  GenerationAssembler,
  GenerationBuilder,
  nextGeneration,
} from './storage/generation-builder.ts';
export {
  decodeGeneration,
  type EncodedGeneration,
  encodeGeneration,
} from './storage/generation-codec.ts';
export { forEachRowKeyed, rowsWithValues } from './storage/generation-rows.ts';
export { valuesKey } from './storage/row-key.ts';
export { sameContent } from './storage/same-content.ts';
export {
  exportGeneration,
  importGeneration,
  type SharedGeneration,
} from './storage/shared-generation.ts';
