import type { AggregateCall } from './ast.ts';

/**
 * The key an aggregate's value has in each result row: `count` for COUNT(*) and COUNT(field),
 * `count_distinct_<field>`, `sum_<field>`, `avg_<field>`, `min_<field>`, `max_<field>`.
 * HAVING and ORDER BY name an aggregate by this key or by its call, which comes to the same.
 */
export function aggregateKey(call: AggregateCall): string {
  if (call.fn === 'COUNT') return call.distinct ? `count_distinct_${call.field}` : 'count';
  return `${call.fn.toLowerCase()}_${call.field}`;
}

/** The call as `meta.query` echoes it: `COUNT(*)`, `COUNT(DISTINCT city)`, `MAX(price)`. */
export function renderAggregate(call: AggregateCall): string {
  return `${call.fn}(${call.distinct ? 'DISTINCT ' : ''}${call.field ?? '*'})`;
}
