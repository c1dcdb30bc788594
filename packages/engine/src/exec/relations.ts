import type { CompiledRelation } from '../schema/compiled-schema.ts';
import type { Generation, TableSnapshot } from '../storage/generation.ts';
import { indexName } from '../storage/generation.ts';
import { rowKey } from '../storage/row-key.ts';
import { CHUNK_BITS, type Chunk, OFFSET_MASK } from '../storage/table-data.ts';

const NONE: readonly number[] = [];

/** `indexName` of a relation's join columns (arrays of the compiled schema), made once each. */
const INDEX_NAMES = new WeakMap<readonly number[], string>();

function joinIndexName(columns: readonly number[]): string {
  let name = INDEX_NAMES.get(columns);
  if (name === undefined) {
    name = indexName(columns);
    INDEX_NAMES.set(columns, name);
  }
  return name;
}

/**
 * Row ids of the rows `relation` reaches from row `rowId` of `from`, through the target
 * table's index on the relation's join columns: one at most for a forward relation, any number
 * for a reverse one (in row-id order).
 */
export function relatedRows(
  generation: Generation,
  from: TableSnapshot,
  relation: CompiledRelation,
  rowId: number,
): readonly number[] {
  const chunk = from.data.chunks[rowId >>> CHUNK_BITS] as Chunk;
  const key = rowKey(chunk.columns, relation.localColumns, rowId & OFFSET_MASK);
  if (key === null) return NONE;
  const index = generation
    .table(relation.target)
    .indexes.get(joinIndexName(relation.targetColumns));
  if (!index) return NONE;
  if (relation.kind === 'forward') {
    const target = index.first(key);
    return target === undefined ? NONE : [target];
  }
  return index.all(key);
}
