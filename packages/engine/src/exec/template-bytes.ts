import type { Condition, Query, QueryShape, SubQuery } from '@replix/query';
import type { PlanSubQuery } from './plan.ts';
import type { PlanTemplate } from './plan-template.ts';

/**
 * What one cached plan holds beyond its parts (the entry, template, plan, echo and slot
 * arrays, the cache's map and list slots). The costs below are bytes of V8's heap, each above
 * what `bench:plans` measures (heap retained after GC, over many templates of one kind) for the
 * kind it dominates, so the sum bounds an entry from above. bench:plans prints measured against
 * counted per kind; a unit test keeps the count above the measure.
 */
const ENTRY_BYTES = 2048;
/**
 * Per character of the text, counted four times (the text, which a name or literal sliced out of
 * it may keep whole, the filter rendered again for `meta.query`, that as JSON in the echo's
 * text, and the echo's pieces around the literals), and of the shape key: two bytes each, as a
 * string holding any character past U+00FF is stored; and once more as the meta's head in
 * UTF-8 words, made when the plan is kept for its text (meta-json.ts): a byte, up to 3 past
 * U+07FF.
 */
const BYTES_PER_TEXT_CHAR = 11;
const BYTES_PER_KEY_CHAR = 2;
/**
 * Per token: the syntax nodes binding keeps (literals, paths, spans), a literal's place, an IN
 * list's value in its set, a selection name in the echo: about 100 measured for an IN list.
 */
const BYTES_PER_TOKEN = 125;
/** Per condition: its syntax node, plan leaf and literal slot (about 450 measured). */
const BYTES_PER_CONDITION = 500;
/**
 * Per plan output, sort key or aggregate: `...` on a wide table makes thousands (57 measured),
 * and the row layout made for the plan's outputs once it runs holds two slots more each.
 */
const BYTES_PER_OUTPUT = 100;
/** Per nested selection, besides its outputs: its plan node and arrays (about 350 measured). */
const BYTES_PER_SELECTION = 500;
/** Per LIKE pattern character: its compiled matcher's segments and pieces (75 measured). */
const BYTES_PER_PATTERN_CHAR = 100;

/** What a plan cache entry is made from: the text, its shape, its parse and its template. */
export interface TemplateSource {
  readonly text: string;
  readonly shape: QueryShape;
  readonly query: Query;
  readonly template: PlanTemplate;
}

/**
 * An upper bound of the heap bytes a cached template keeps alive, counted from its structure:
 * the text and shape key, tokens, conditions, plan outputs, nested selections and LIKE patterns. Linear in the
 * template's size, so counting it costs a fraction of the parse and validation it follows.
 */
export function templateBytes({ text, shape, query, template }: TemplateSource): number {
  const { conditions, patternChars } = filterCounts(query);
  return (
    ENTRY_BYTES +
    BYTES_PER_TEXT_CHAR * text.length +
    BYTES_PER_KEY_CHAR * shape.key.length +
    BYTES_PER_TOKEN * shape.tokens +
    BYTES_PER_CONDITION * conditions +
    BYTES_PER_OUTPUT * outputCount(template.plan) +
    BYTES_PER_SELECTION * selectionCount(template.plan) +
    BYTES_PER_PATTERN_CHAR * patternChars
  );
}

/**
 * An upper bound of the heap a plan kept for one exact text holds (`QueryEngine`'s text cache),
 * from its template's count: binding rebuilds at most what the template holds (its leaves,
 * echo and plan nodes, as many literals as the template's), and the bound plan shares the rest
 * and keeps it alive after the template's own entry is gone, so the template is counted twice;
 * the text itself is counted per character as a template's is.
 */
export function boundPlanBytes(text: string, templateSize: number): number {
  return 2 * templateSize + BYTES_PER_TEXT_CHAR * text.length;
}

/** Outputs, sort keys and aggregates of `sub` and every selection nested in it. */
function outputCount(sub: PlanSubQuery): number {
  let count = sub.outputs.length + sub.orderBy.length + sub.aggregates.length + sub.groupBy.length;
  for (const output of sub.outputs)
    if (output.kind === 'relation') count += outputCount(output.sub);
  return count;
}

/** Selections nested in `sub`, at every level. */
function selectionCount(sub: PlanSubQuery): number {
  let count = 0;
  for (const output of sub.outputs)
    if (output.kind === 'relation') count += 1 + selectionCount(output.sub);
  return count;
}

interface FilterCounts {
  conditions: number;
  patternChars: number;
}

/** Conditions and LIKE pattern characters in every filter of `sub`, nested selections included. */
function filterCounts(sub: SubQuery, counts: FilterCounts = { conditions: 0, patternChars: 0 }) {
  if (sub.filter) countCondition(sub.filter, counts);
  if (sub.having) countCondition(sub.having, counts);
  for (const item of sub.selection) if (item.kind === 'relation') filterCounts(item.query, counts);
  return counts;
}

function countCondition(condition: Condition, counts: FilterCounts): void {
  counts.conditions++;
  if (condition.kind === 'and' || condition.kind === 'or') {
    for (const operand of condition.operands) countCondition(operand, counts);
  } else if (condition.kind === 'like') {
    counts.patternChars += condition.pattern.length;
  }
}
