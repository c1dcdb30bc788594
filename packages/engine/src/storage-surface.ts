/**
 * `@replix/engine/storage`: the columnar storage pieces a thread that only builds chunks needs
 * (a load worker, a connector's value parsing), without the query engine behind `@replix/engine`,
 * which costs a thread a second to load.
 */

export { daysFromCivil, epochMicros } from './storage/civil-date.ts';
export { exportChunk, importChunk, type SharedChunk } from './storage/shared-generation.ts';
export type { Chunk, TableData } from './storage/table-data.ts';
export { TableLoader } from './storage/table-loader.ts';
