import type { CompiledRelation } from '../schema/compiled-schema.ts';
import type { PlanFilter, PlanSubQuery } from './plan.ts';

/**
 * The API names of every table a plan reads: its own, those its relations, related filters and
 * sorts through relations reach. A result can change only when one of them does.
 */
export function planTables(plan: PlanSubQuery): Set<string> {
  const tables = new Set<string>();
  const viaRelation = (relation: CompiledRelation) => tables.add(relation.target);
  const filter = (node: PlanFilter | null): void => {
    if (node === null) return;
    if (node.kind === 'and' || node.kind === 'or') node.operands.forEach(filter);
    else if (node.kind === 'related') {
      tables.add(node.target.name);
      filter(node.filter);
    }
  };
  const visit = (sub: PlanSubQuery): void => {
    tables.add(sub.table.name);
    filter(sub.filter);
    for (const output of sub.outputs) {
      if (output.kind !== 'relation') continue;
      viaRelation(output.relation);
      visit(output.sub);
    }
    for (const sort of sub.orderBy)
      if (sort.source.kind === 'column') sort.source.via.forEach(viaRelation);
  };
  visit(plan);
  return tables;
}
