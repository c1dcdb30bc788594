import { Buffer } from 'node:buffer';
import type { CompiledSchema } from '../schema/compiled-schema.ts';
import type { ColumnChunk, DecimalChunk, Float64Chunk } from './column-chunk.ts';
import { ExactTexts, type SharedExactTexts } from './exact-texts.ts';
import { Generation, type TableSnapshot } from './generation.ts';
import { KeyIndex, type SharedKeyIndex } from './key-index.ts';
import type { Chunk } from './table-data.ts';

/**
 * A generation as structured-cloneable data, for `postMessage` to the instance's worker
 * threads. The schema is not part of it: each thread compiles its own once and passes it to
 * `importGeneration`.
 */
export interface SharedGeneration {
  readonly id: number;
  readonly createdAt: number;
  readonly tables: readonly SharedTable[];
  readonly tableStamps: readonly (readonly [string, number])[];
}

/**
 * A chunk as it crosses: its arrays are over SharedArrayBuffers, so the clone shares them;
 * exact texts travel as their shared arrays (a class does not survive a structured clone).
 */
export interface SharedChunk extends Omit<Chunk, 'columns'> {
  readonly columns: readonly SharedColumn[];
}

type WithSharedTexts<T> = Omit<T, 'exact'> & { readonly exact: SharedExactTexts | null };

type SharedColumn =
  | Exclude<ColumnChunk, Float64Chunk | DecimalChunk>
  | WithSharedTexts<Float64Chunk>
  | WithSharedTexts<DecimalChunk>;

interface SharedTable {
  readonly name: string;
  readonly chunks: readonly SharedChunk[];
  readonly liveRows: number;
  readonly indexes: readonly (readonly [string, SharedKeyIndex])[];
}

export function exportGeneration(generation: Generation): SharedGeneration {
  const tables: SharedTable[] = [];
  for (const [name, table] of generation.tables) {
    tables.push({
      name,
      chunks: table.data.chunks.map(exportChunk),
      liveRows: table.data.liveRows,
      indexes: [...table.indexes].map(([key, index]) => [key, index.toShared()] as const),
    });
  }
  return {
    id: generation.id,
    createdAt: generation.createdAt,
    tables,
    tableStamps: [...generation.tableStamps],
  };
}

function toSharedColumn(column: ColumnChunk): SharedColumn {
  if (column.kind !== 'float64' && column.kind !== 'decimal') return column;
  return { ...column, exact: column.exact === null ? null : column.exact.toShared() };
}

/**
 * The column back from its clone: exact texts rewrapped, and a text chunk's bytes a Buffer
 * again (a structured clone turns a Buffer into a plain Uint8Array).
 */
function fromSharedColumn(column: SharedColumn): ColumnChunk {
  if (column.kind === 'float64' || column.kind === 'decimal')
    return { ...column, exact: column.exact === null ? null : new ExactTexts(column.exact) };
  if (column.kind !== 'bytes' || Buffer.isBuffer(column.bytes)) return column;
  const bytes = column.bytes as Uint8Array;
  return { ...column, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
}

/** One chunk for `postMessage` (a load worker's, say): its arrays are shared, not copied. */
export function exportChunk(chunk: Chunk): SharedChunk {
  return { ...chunk, columns: chunk.columns.map(toSharedColumn) };
}

/** The chunk `exportChunk` described, on the receiving thread. */
export function importChunk(chunk: SharedChunk): Chunk {
  return { ...chunk, columns: chunk.columns.map(fromSharedColumn) };
}

/** The generation `exportGeneration` described, over `schema` (this thread's compiled copy). */
export function importGeneration(schema: CompiledSchema, shared: SharedGeneration): Generation {
  const tables = new Map<string, TableSnapshot>();
  for (const table of shared.tables) {
    const compiled = schema.tablesByName.get(table.name);
    if (!compiled) throw new Error(`table ${table.name} is not in this thread's schema`);
    const chunks = table.chunks.map(importChunk);
    tables.set(table.name, {
      schema: compiled,
      data: { chunks, liveRows: table.liveRows },
      indexes: new Map(table.indexes.map(([key, index]) => [key, KeyIndex.fromShared(index)])),
    });
  }
  return new Generation(shared.id, schema, tables, shared.createdAt, new Map(shared.tableStamps));
}
