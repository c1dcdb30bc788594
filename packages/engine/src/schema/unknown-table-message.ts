import { suggest } from '@replix/query';
import type { SourceTable } from '../source-schema.ts';

const KIND_WORDS: Record<NonNullable<SourceTable['kind']>, string> = {
  table: 'table',
  view: 'view',
  materialized_view: 'materialized view',
};

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Says why a config's table name matches nothing, and what the source has instead: the closest
 * table or view by name with its kind, or else how many of each there are.
 */
export function unknownTableMessage(
  name: string,
  tables: readonly SourceTable[],
  views: readonly SourceTable[],
): string {
  const missing = `the source has no table or view "${name}"`;
  const all = [...tables, ...views];
  const closest = suggest(
    name,
    all.map((relation) => relation.name),
  );
  const match = all.find((relation) => relation.name === closest);
  if (match)
    return `${missing}; did you mean the ${KIND_WORDS[match.kind ?? 'table']} "${match.name}"?`;
  return `${missing} (it has ${count(tables.length, 'table')} and ${count(views.length, 'view')})`;
}
