import type { AggregateFunction, CompareOperator, JsonStep } from '@replix/query';
import type { CompiledColumn, CompiledRelation, CompiledTable } from '../schema/compiled-schema.ts';
import type { Comparable } from '../storage/comparable.ts';

/** A validated filter: names resolved to column positions, literals in the column's domain. */
export type PlanFilter =
  | {
      readonly kind: 'compare';
      readonly column: CompiledColumn;
      readonly operator: CompareOperator;
      /** Null for a comparison with NULL, which matches no row (SQL semantics). */
      readonly value: Comparable | null;
      /** The number literal's text, for a DECIMAL stored as units (exec/unit-range.ts). */
      readonly exact?: string;
    }
  | {
      readonly kind: 'like';
      readonly column: CompiledColumn;
      readonly test: (text: string) => boolean;
    }
  | {
      readonly kind: 'in';
      readonly column: CompiledColumn;
      readonly values: ReadonlySet<Comparable>;
    }
  | { readonly kind: 'isNull'; readonly column: CompiledColumn; readonly negated: boolean }
  /**
   * A test of the value at a path inside a JSON column (exec/json-path.ts); `nulls` when it
   * matches a NULL column too (IS NULL: the path is missing there).
   */
  | {
      readonly kind: 'json';
      readonly column: CompiledColumn;
      readonly steps: readonly JsonStep[];
      readonly test: (value: unknown) => boolean;
      readonly nulls: boolean;
    }
  /** A test of an array column's JSON text: CONTAINS, CONTAINED BY, OVERLAPS, CARDINALITY. */
  | {
      readonly kind: 'array';
      readonly column: CompiledColumn;
      readonly test: (text: string) => boolean;
    }
  | {
      readonly kind: 'between';
      readonly column: CompiledColumn;
      readonly low: Comparable | null;
      readonly high: Comparable | null;
      /** The number literals' texts, for a DECIMAL stored as units (exec/unit-range.ts). */
      readonly exact?: readonly [string, string];
    }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly PlanFilter[] }
  /** A row matches when a related row (for to-many: at least one) matches `filter`. */
  | {
      readonly kind: 'related';
      readonly relation: CompiledRelation;
      readonly target: CompiledTable;
      readonly filter: PlanFilter;
    };

export interface PlanAggregate {
  readonly key: string;
  readonly fn: AggregateFunction;
  /** Null for COUNT(*). */
  readonly column: CompiledColumn | null;
  /** COUNT(DISTINCT column). */
  readonly distinct: boolean;
}

/** An exact number (`units × 10^-scale`), or null for NULL: what a HAVING number test takes. */
export type NumberTest = (value: { units: bigint; scale: number } | null) => boolean;

/**
 * A validated HAVING condition. A group key's test, or a MIN's or MAX's, is a filter of the
 * table tested on one row: the group's first (keys) or the row holding the extreme value; the
 * other aggregates (COUNT, SUM, AVG) are exact numbers, tested as such.
 */
export type PlanHaving =
  | { readonly kind: 'and' | 'or'; readonly operands: readonly PlanHaving[] }
  | {
      readonly kind: 'row';
      /** The aggregate (MIN or MAX) whose row is tested; -1: the group's first row. */
      readonly aggregate: number;
      readonly filter: PlanFilter;
    }
  | { readonly kind: 'number'; readonly aggregate: number; readonly test: NumberTest };

export type PlanOutput =
  | { readonly kind: 'column'; readonly key: string; readonly column: CompiledColumn }
  /** The value at a path inside a JSON column, written as JSON (null when missing). */
  | {
      readonly kind: 'json';
      readonly key: string;
      readonly column: CompiledColumn;
      readonly steps: readonly JsonStep[];
    }
  | {
      readonly kind: 'relation';
      readonly key: string;
      readonly relation: CompiledRelation;
      readonly sub: PlanSubQuery;
    }
  | { readonly kind: 'aggregate'; readonly key: string; readonly aggregate: PlanAggregate };

/** What a sort key reads: a column of the row, one reached through to-one relations, or an aggregate. */
export type SortSource =
  | {
      readonly kind: 'column';
      readonly via: readonly CompiledRelation[];
      readonly column: CompiledColumn;
      /** Steps into a JSON column: the value there sorts (exec/json-path.ts `jsonSortValue`). */
      readonly json?: readonly JsonStep[];
    }
  | { readonly kind: 'aggregate'; readonly key: string };

export interface PlanSort {
  readonly source: SortSource;
  readonly descending: boolean;
}

export interface PlanSubQuery {
  readonly table: CompiledTable;
  readonly filter: PlanFilter | null;
  readonly outputs: readonly PlanOutput[];
  /** Non-empty when the selection has aggregates; the columns are the GROUP BY keys. */
  readonly aggregates: readonly PlanAggregate[];
  readonly groupBy: readonly CompiledColumn[];
  /** HAVING: which groups are kept; null keeps them all. */
  readonly having: PlanHaving | null;
  readonly orderBy: readonly PlanSort[];
  /** The effective limit; null means unbounded. */
  readonly limit: number | null;
  readonly offset: number;
}

export interface QueryPlan extends PlanSubQuery {
  /** The AFTER cursor text; null without AFTER. */
  readonly after: string | null;
  /** `meta.query`: the parsed parameters the query specified. */
  readonly echo: Readonly<Record<string, unknown>>;
  /** `JSON.stringify(echo)`, made with the plan (a cached plan's from pieces, see plan-template.ts). */
  readonly echoJson: string;
}
