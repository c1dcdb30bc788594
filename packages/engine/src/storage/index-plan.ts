import type { CompiledSchema } from '../schema/compiled-schema.ts';

export interface IndexSpec {
  readonly columns: readonly number[];
  readonly unique: boolean;
}

function sameColumns(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((column, i) => column === b[i]);
}

/**
 * The indexes each table needs: its primary key (unique), and the join columns of every
 * relation that lands on it (a forward relation looks up the parent's referenced columns, a
 * reverse one the children's foreign-key columns).
 */
export function planIndexes(schema: CompiledSchema): Map<string, IndexSpec[]> {
  const plan = new Map<string, IndexSpec[]>();
  for (const table of schema.tables) {
    plan.set(
      table.name,
      table.primaryKey.length ? [{ columns: table.primaryKey, unique: true }] : [],
    );
  }
  for (const table of schema.tables) {
    for (const relation of table.relations) {
      const specs = plan.get(relation.target);
      const target = schema.tablesByName.get(relation.target);
      if (!specs || !target) continue;
      if (specs.some((spec) => sameColumns(spec.columns, relation.targetColumns))) continue;
      specs.push({ columns: relation.targetColumns, unique: false });
    }
  }
  return plan;
}
