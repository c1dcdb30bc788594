import type { Condition, Path, Query, SubQuery } from '@replix/query';
import { EngineError } from '../errors.ts';
import { distinctSorts } from './distinct-sorts.ts';
import { QUERY_LIMITS, type StructuralLimits } from './query-limits.ts';

/** Paths quoted in a message are cut here: a path of huge quoted names must not flood it. */
const MAX_QUOTED_PATH = 60;

function tooComplex(message: string): EngineError {
  return new EngineError('query_too_complex', message);
}

function quotePath(path: Path): string {
  const text = path.segments.join('.');
  return `"${text.length > MAX_QUOTED_PATH ? `${text.slice(0, MAX_QUOTED_PATH)}...` : text}"`;
}

/** One walk over the syntax tree; counters that span the whole query live here. */
class LimitChecker {
  readonly #limits: StructuralLimits;
  #filterTerms = 0;
  #selectionItems = 0;

  constructor(limits: StructuralLimits) {
    this.#limits = limits;
  }

  subQuery(sub: SubQuery): void {
    this.#selectionItems += sub.selection.length;
    const maxItems = this.#limits.selectionItems;
    if (this.#selectionItems > maxItems) {
      throw tooComplex(
        `The query selects more than ${maxItems} items at all levels together (limit: ${maxItems} fields, wildcards, relations and aggregates per query). Select all fields of a table with *, or split the query.`,
      );
    }
    if (sub.filter) this.condition(sub.filter);
    if (sub.having) this.condition(sub.having);
    const sorts = distinctSorts(sub.orderBy);
    const maxKeys = this.#limits.orderByKeys;
    if (sorts.length > maxKeys) {
      throw tooComplex(
        `ORDER BY has ${sorts.length} distinct keys (limit: ${maxKeys} per query or nested selection, a repeated key counted once). Sort by fewer fields.`,
      );
    }
    for (const sort of sorts) this.path(sort.field, 'an ORDER BY');
    for (const item of sub.selection) {
      if (item.kind === 'relation') this.subQuery(item.query);
    }
  }

  condition(condition: Condition): void {
    if (condition.kind === 'and' || condition.kind === 'or') {
      for (const operand of condition.operands) this.condition(operand);
      return;
    }
    this.#filterTerms++;
    const maxTerms = this.#limits.filterTerms;
    if (this.#filterTerms > maxTerms) {
      throw tooComplex(
        `The filters have more than ${maxTerms} conditions (limit: ${maxTerms} conditions per query, all filters together). Compare a field with many values in one IN (...) list, or split the query.`,
      );
    }
    this.path(condition.field, 'a filter');
    const maxValues = this.#limits.inListValues;
    if (
      (condition.kind === 'in' || condition.kind === 'array') &&
      condition.values.length > maxValues
    ) {
      throw tooComplex(
        `The ${condition.kind === 'in' ? 'IN' : condition.operator} list on ${quotePath(condition.field)} has ${condition.values.length} values (limit: ${maxValues} values per IN list). Query the values in batches of at most ${maxValues}.`,
      );
    }
  }

  path(path: Path, where: string): void {
    const relations = path.segments.length - 1;
    const maxRelations = this.#limits.pathRelations;
    if (relations > maxRelations) {
      throw tooComplex(
        `The path ${quotePath(path)} in ${where} walks ${relations} relations (limit: ${maxRelations} relations per path). Query from a table closer to the field.`,
      );
    }
  }
}

/**
 * Refuses a query over a structural limit of `QUERY_LIMITS` enforced at validation (the parser
 * enforces the others) with `query_too_complex`, naming the limit, its value and a way under it.
 * Needs no schema, so an oversized query costs one linear walk and nothing more.
 */
export function checkQueryLimits(query: Query, limits: StructuralLimits = QUERY_LIMITS): void {
  new LimitChecker(limits).subQuery(query);
}
