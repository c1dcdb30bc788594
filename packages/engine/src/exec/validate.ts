import {
  type AggregateCall,
  aggregateKey,
  type Condition,
  type JsonStep,
  type Literal,
  type Path,
  type Query,
  renderAggregate,
  type SelectionItem,
  type SubQuery,
  suggest,
} from '@replix/query';
import { EngineError } from '../errors.ts';
import type {
  CompiledColumn,
  CompiledRelation,
  CompiledSchema,
  CompiledTable,
} from '../schema/compiled-schema.ts';
import type { Comparable } from '../storage/comparable.ts';
import { unitScaleOf } from '../storage/decimal-units.ts';
import { cardinalityTest, listTest } from './array-tests.ts';
import { checkQueryLimits } from './check-query-limits.ts';
import { distinctSorts } from './distinct-sorts.ts';
import { numberTest } from './having-number.ts';
import { jsonOutputKey, jsonPathText, jsonTest } from './json-path.ts';
import { compileLike } from './like-pattern.ts';
import { arrayMisuse, literalValue } from './literal-value.ts';
import type {
  PlanAggregate,
  PlanFilter,
  PlanHaving,
  PlanOutput,
  PlanSort,
  PlanSubQuery,
  QueryPlan,
} from './plan.ts';
import { wholeUnits } from './unit-range.ts';

export interface ValidateOptions {
  /** LIMIT when the query has none (spec: 1000). */
  readonly defaultLimit: number;
  /** LIMIT of nested to-many selections without one; 0 means unbounded. */
  readonly nestedDefaultLimit: number;
}

const NUMERIC = new Set(['int', 'bigint', 'float', 'decimal', 'time']);
const TEXT = new Set(['string', 'json']);

/** Names the schema does not know are cut here in messages, so a huge one cannot flood them. */
const MAX_SHOWN_NAME = 60;

/** A name from the query text as a message shows it: at most MAX_SHOWN_NAME characters. */
function shown(name: string): string {
  return name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}...` : name;
}

function didYouMean(name: string, candidates: readonly string[]): string {
  const guess = suggest(name, candidates);
  return guess ? ` Did you mean "${guess}"?` : '';
}

function fieldNames(table: CompiledTable): string[] {
  return [...table.columns.map((c) => c.name), ...table.relations.map((r) => r.name)];
}

function unknownField(table: CompiledTable, name: string): EngineError {
  return new EngineError(
    'executor_error',
    `Unknown field "${shown(name)}" on table "${table.name}".${didYouMean(name, fieldNames(table))}`,
  );
}

/** Relations a message lists at most: a table with more says how many more. */
const LISTED_RELATIONS = 12;

/**
 * An unknown name given a nested selection: the user meant a relation. Besides a typo's fix,
 * the hint finds a relation the name is a word of (`items` for `order_items`: reverse relations
 * are named after the referencing table), else lists the table's relations.
 */
function unknownRelation(table: CompiledTable, name: string): EngineError {
  const relations = table.relations.map((relation) => relation.name).sort();
  const lower = name.toLowerCase();
  const guess =
    suggest(name, relations) ??
    relations.find((relation) => relation.toLowerCase().split('_').includes(lower));
  let hint: string;
  if (guess) hint = ` Did you mean the relation "${guess}"?`;
  else if (relations.length === 0) hint = ' It has no relations.';
  else {
    const listed = relations.slice(0, LISTED_RELATIONS).map((relation) => `"${relation}"`);
    const more = relations.length - listed.length;
    hint = ` Its relations: ${listed.join(', ')}${more > 0 ? ` and ${more} more` : ''}.`;
  }
  return new EngineError(
    'executor_error',
    `Unknown relation "${shown(name)}" on table "${table.name}".${hint}`,
  );
}

/** Refuses a JSON path into a field that holds no JSON. */
function requireJson(column: CompiledColumn, path: string): void {
  if (column.type !== 'json') {
    throw new EngineError(
      'executor_error',
      `${path} reads into a JSON field; "${column.name}" is ${column.type}.`,
    );
  }
}

function targetOf(schema: CompiledSchema, relation: CompiledRelation): CompiledTable {
  const target = schema.tablesByName.get(relation.target);
  if (!target) throw new Error(`relation ${relation.name} targets a missing table`);
  return target;
}

/** Which literal a condition compares with: itself, or the one bound in its place. */
export type ResolveLiteral = (literal: Literal) => Literal;

const asWritten: ResolveLiteral = (literal) => literal;

/** Renders a literal back to query text for `meta.query.filter`. */
export function renderLiteral(literal: Literal): string {
  switch (literal.kind) {
    case 'string':
      return `'${literal.value.replaceAll("'", "''")}'`;
    case 'number':
      return literal.text;
    case 'boolean':
      return String(literal.value);
    case 'null':
      return 'NULL';
  }
}

/** Renders a filter back to query text for `meta.query.filter`, its literals `resolve`d. */
export function renderCondition(
  condition: Condition,
  resolve: ResolveLiteral = asWritten,
  nested = false,
): string {
  const path = (p: Path) => {
    if (p.aggregate) return renderAggregate(p.aggregate);
    const written = jsonPathText(p.segments.join('.'), p.json ?? []);
    return p.cardinality ? `CARDINALITY(${written})` : written;
  };
  const literal = (l: Literal) => renderLiteral(resolve(l));
  switch (condition.kind) {
    case 'compare':
      return `${path(condition.field)} ${condition.operator} ${literal(condition.value)}`;
    case 'like':
      return `${path(condition.field)} ${condition.caseInsensitive ? 'ILIKE' : 'LIKE'} '${condition.pattern.replaceAll("'", "''")}'`;
    case 'in':
      return `${path(condition.field)} IN (${condition.values.map(literal).join(', ')})`;
    case 'array':
      return `${path(condition.field)} ${condition.operator} (${condition.values.map(literal).join(', ')})`;
    case 'isNull':
      return `${path(condition.field)} IS ${condition.negated ? 'NOT ' : ''}NULL`;
    case 'between':
      return `${path(condition.field)} BETWEEN ${literal(condition.low)} AND ${literal(condition.high)}`;
    case 'and':
    case 'or': {
      const text = condition.operands
        .map((operand) => renderCondition(operand, resolve, true))
        .join(condition.kind === 'and' ? ' AND ' : ' OR ');
      return nested ? `(${text})` : text;
    }
  }
}

/** A condition whose plan holds values converted from literals. */
export type ValueCondition = Extract<Condition, { kind: 'compare' | 'in' | 'between' }>;

/**
 * Where a validated plan holds literal values (`validateQuery`'s `slots`, in the order they
 * were converted): a plan cached by shape rebuilds these leaves with another query's literals,
 * by `bind`, which converts them as validation did.
 */
export type LiteralSlot =
  | { readonly leaf: PlanFilter; readonly bind: (resolve: ResolveLiteral) => PlanFilter }
  | { readonly leaf: PlanHaving; readonly bind: (resolve: ResolveLiteral) => PlanHaving };

/**
 * The plan leaf of a comparison, IN or BETWEEN once its checks passed: its literals converted
 * into the column's domain, in their order, each `resolve`d first. Validation and binding a
 * cached plan both call this, so a bad literal fails the same way on either path.
 */
export function valueLeaf(
  column: CompiledColumn,
  condition: ValueCondition,
  resolve: ResolveLiteral = asWritten,
): PlanFilter {
  switch (condition.kind) {
    case 'compare': {
      const literal = resolve(condition.value);
      const value = literalValue(column, literal);
      const leaf = { kind: 'compare', column, operator: condition.operator, value } as const;
      return inUnits(column) && literal.kind === 'number' ? { ...leaf, exact: literal.text } : leaf;
    }
    case 'in': {
      const values = new Set<Comparable>();
      const scale = unitScaleOf(column.type, column.scale);
      for (const literal of condition.values) {
        const resolved = resolve(literal);
        const value = literalValue(column, resolved);
        // A DECIMAL equals no literal between two of its units (exec/unit-range.ts).
        if (scale !== undefined && resolved.kind === 'number' && !wholeUnits(resolved.text, scale))
          continue;
        if (value !== null) values.add(value);
      }
      return { kind: 'in', column, values };
    }
    case 'between': {
      const low = resolve(condition.low);
      const high = resolve(condition.high);
      const leaf = {
        kind: 'between',
        column,
        low: literalValue(column, low),
        high: literalValue(column, high),
      } as const;
      return inUnits(column) && low.kind === 'number' && high.kind === 'number'
        ? { ...leaf, exact: [low.text, high.text] }
        : leaf;
    }
  }
}

/** Whether the column is a DECIMAL stored as units, whose comparisons read literals' texts. */
function inUnits(column: CompiledColumn): boolean {
  return unitScaleOf(column.type, column.scale) !== undefined;
}

class Validator {
  readonly #schema: CompiledSchema;
  readonly #options: ValidateOptions;
  readonly #lenient: boolean;
  readonly #slots: LiteralSlot[] | undefined;

  constructor(
    schema: CompiledSchema,
    options: ValidateOptions,
    lenient: boolean,
    slots: LiteralSlot[] | undefined,
  ) {
    this.#schema = schema;
    this.#options = options;
    this.#lenient = lenient;
    this.#slots = slots;
  }

  /** Resolves a dotted path to the relations it walks and the column it ends on. */
  resolvePath(
    table: CompiledTable,
    path: Path,
  ): { via: CompiledRelation[]; column: CompiledColumn; owner: CompiledTable } {
    const via: CompiledRelation[] = [];
    let current = table;
    const segments = path.segments;
    for (let i = 0; i < segments.length - 1; i++) {
      const name = segments[i] as string;
      const relation = current.relationsByName.get(name);
      if (!relation) {
        if (current.columnsByName.has(name)) {
          throw new EngineError(
            'executor_error',
            `"${name}" on table "${current.name}" is a field, not a relation: it has no "${shown(segments[i + 1] as string)}".`,
          );
        }
        throw unknownField(current, name);
      }
      via.push(relation);
      current = targetOf(this.#schema, relation);
    }
    const last = segments[segments.length - 1] as string;
    const column = current.columnsByName.get(last);
    if (!column) {
      if (current.relationsByName.has(last)) {
        throw new EngineError(
          'executor_error',
          `"${last}" on table "${current.name}" is a relation; name one of its fields, e.g. "${[...segments, 'id'].join('.')}".`,
        );
      }
      throw unknownField(current, last);
    }
    return { via, column, owner: current };
  }

  filter(table: CompiledTable, condition: Condition): PlanFilter {
    if (condition.kind === 'and' || condition.kind === 'or') {
      return {
        kind: condition.kind,
        operands: condition.operands.map((c) => this.filter(table, c)),
      };
    }
    const { via, column } = this.resolvePath(table, condition.field);
    const json = condition.field.json;
    let leaf = condition.field.cardinality
      ? this.cardinality(column, condition)
      : json
        ? this.jsonLeaf(column, json, condition)
        : this.predicate(column, condition);
    // Wrap the predicate in the relations it was reached through, innermost first.
    for (let i = via.length - 1; i >= 0; i--) {
      const relation = via[i] as CompiledRelation;
      leaf = { kind: 'related', relation, target: targetOf(this.#schema, relation), filter: leaf };
    }
    return leaf;
  }

  /** `data->'a'->0 …`: a typed test of the value at a path inside a JSON field. */
  jsonLeaf(
    column: CompiledColumn,
    steps: readonly JsonStep[],
    condition: Exclude<Condition, { kind: 'and' | 'or' }>,
  ): PlanFilter {
    const path = jsonPathText(column.name, steps);
    requireJson(column, path);
    const nulls = condition.kind === 'isNull' && !condition.negated;
    const make = (resolve: ResolveLiteral): PlanFilter => ({
      kind: 'json',
      column,
      steps,
      test: jsonTest(path, condition, resolve),
      nulls,
    });
    return this.#slotted(make);
  }

  /** `CARDINALITY(field) …`: a test of the number of elements of an array field. */
  cardinality(column: CompiledColumn, condition: Exclude<Condition, { kind: 'and' | 'or' }>) {
    if (column.type !== 'array') {
      throw new EngineError(
        'executor_error',
        `CARDINALITY needs an array field; "${column.name}" is ${column.type}.`,
      );
    }
    // The number of elements of NULL is NULL: the field's own test.
    if (condition.kind === 'isNull') return this.predicate(column, condition);
    const make = (resolve: ResolveLiteral): PlanFilter => ({
      kind: 'array',
      column,
      test: cardinalityTest(column, condition, resolve),
    });
    return this.#slotted(make);
  }

  predicate(
    column: CompiledColumn,
    condition: Exclude<Condition, { kind: 'and' | 'or' }>,
  ): PlanFilter {
    if (condition.kind === 'array') {
      if (column.type !== 'array') {
        throw new EngineError(
          'executor_error',
          `${condition.operator} needs an array field; "${column.name}" is ${column.type}. Use IN (...) to compare a field with a list.`,
        );
      }
      const { operator, values } = condition;
      const make = (resolve: ResolveLiteral): PlanFilter => ({
        kind: 'array',
        column,
        test: listTest(column, operator, values, resolve),
      });
      return this.#slotted(make);
    }
    if (column.type === 'array' && condition.kind !== 'isNull') {
      throw new EngineError('executor_error', arrayMisuse(column.name));
    }
    switch (condition.kind) {
      case 'compare':
        if (
          column.type === 'boolean' &&
          !['=', '!='].includes(condition.operator) &&
          condition.value.kind !== 'null'
        ) {
          throw new EngineError(
            'executor_error',
            `Field "${column.name}" is boolean: compare it with = or != only.`,
          );
        }
        return this.#valueLeaf(column, condition);
      case 'like':
        if (!TEXT.has(column.type)) {
          throw new EngineError(
            'executor_error',
            `${condition.caseInsensitive ? 'ILIKE' : 'LIKE'} needs a text field; "${column.name}" is ${column.type}.`,
          );
        }
        return {
          kind: 'like',
          column,
          test: compileLike(condition.pattern, condition.caseInsensitive),
        };
      case 'in':
      case 'between':
        return this.#valueLeaf(column, condition);
      case 'isNull':
        return { kind: 'isNull', column, negated: condition.negated };
    }
  }

  #valueLeaf(column: CompiledColumn, condition: ValueCondition): PlanFilter {
    return this.#slotted((resolve) => valueLeaf(column, condition, resolve));
  }

  /** The leaf `make` gives of the literals as written, kept as a slot a cached plan binds again. */
  #slotted<Leaf extends PlanFilter | PlanHaving>(make: (resolve: ResolveLiteral) => Leaf): Leaf {
    const leaf = make(asWritten);
    this.#slots?.push({ leaf, bind: make } as LiteralSlot);
    return leaf;
  }

  /**
   * HAVING of a grouped query: each condition names a selected aggregate or GROUP BY field, by
   * its key (`count`, `max_price`, `category`) or, for an aggregate, by its call (`COUNT(*)`).
   */
  having(
    table: CompiledTable,
    condition: Condition,
    outputs: readonly PlanOutput[],
    aggregates: PlanAggregate[],
  ): PlanHaving {
    if (condition.kind === 'and' || condition.kind === 'or') {
      return {
        kind: condition.kind,
        operands: condition.operands.map((operand) =>
          this.having(table, operand, outputs, aggregates),
        ),
      };
    }
    const path = condition.field;
    const name = path.segments.join('.');
    const plain = path.segments.length === 1 && !path.json;
    const output = plain ? outputs.find((o) => o.key === name) : undefined;
    if (output?.kind === 'column') {
      return { kind: 'row', aggregate: -1, filter: this.predicate(output.column, condition) };
    }
    if (output?.kind !== 'aggregate' && !path.aggregate) {
      const keys = outputs.map((o) => o.key);
      throw new EngineError(
        'executor_error',
        `HAVING "${shown(name)}" must name an aggregate or GROUP BY field of the selection (${keys.map((key) => `"${key}"`).join(', ')}), or an aggregate's call.${didYouMean(name, keys)}`,
      );
    }
    const aggregate =
      output?.kind === 'aggregate'
        ? output.aggregate
        : this.hiddenAggregate(table, path.aggregate as AggregateCall, aggregates);
    const a = aggregates.indexOf(aggregate);
    const { fn, column } = aggregate;
    if ((fn === 'MIN' || fn === 'MAX') && column !== null) {
      return { kind: 'row', aggregate: a, filter: this.predicate(column, condition) };
    }
    const make = (resolve: ResolveLiteral): PlanHaving => ({
      kind: 'number',
      aggregate: a,
      test: numberTest(name, condition, resolve),
    });
    return this.#slotted(make);
  }

  subQuery(
    table: CompiledTable,
    sub: SubQuery,
    defaultLimit: number | null,
    toOne: boolean,
  ): PlanSubQuery {
    const outputs: PlanOutput[] = [];
    const keys = new Map<string, { index: number; generated: boolean }>();
    const put = (output: PlanOutput, generated: boolean) => {
      const existing = keys.get(output.key);
      if (existing) {
        // Explicit fields override wildcard-generated ones in place; repeats are dropped.
        if (existing.generated && !generated) {
          outputs[existing.index] = output;
          keys.set(output.key, { index: existing.index, generated: false });
        }
        return;
      }
      keys.set(output.key, { index: outputs.length, generated });
      outputs.push(output);
    };
    const aggregates: PlanAggregate[] = [];

    for (const item of sub.selection) this.selectionItem(table, item, put, aggregates);

    if (aggregates.length > 0) {
      const relation = outputs.find((o) => o.kind === 'relation');
      if (relation) {
        throw new EngineError(
          'executor_error',
          `Relation "${relation.key}" cannot be selected beside aggregates: every other field is a GROUP BY key.`,
        );
      }
      const json = outputs.find((o) => o.kind === 'json');
      if (json?.kind === 'json') {
        throw new EngineError(
          'executor_error',
          `${jsonPathText(json.column.name, json.steps)} cannot be selected beside aggregates: a value inside JSON is no GROUP BY key.`,
        );
      }
      for (const aggregate of aggregates) {
        if (keys.has(aggregate.key)) {
          throw new EngineError(
            'executor_error',
            `Two fields of the result would be named "${aggregate.key}".`,
          );
        }
        keys.set(aggregate.key, { index: outputs.length, generated: false });
        outputs.push({ kind: 'aggregate', key: aggregate.key, aggregate });
      }
    }
    if (outputs.length === 0) {
      throw new EngineError(
        'executor_error',
        `The selection on table "${table.name}" has no known field.`,
      );
    }
    const groupBy = aggregates.length
      ? outputs.flatMap((o) => (o.kind === 'column' ? [o.column] : []))
      : [];
    const arrayKey = groupBy.find((column) => column.type === 'array');
    if (arrayKey) throw new EngineError('executor_error', arrayMisuse(arrayKey.name));
    if (
      toOne &&
      (sub.orderBy.length || sub.limit !== null || sub.offset !== null || aggregates.length)
    ) {
      throw new EngineError(
        'executor_error',
        `A to-one relation yields one object: ORDER BY, LIMIT, OFFSET and aggregates do not apply to it.`,
      );
    }
    if (sub.having !== null && aggregates.length === 0) {
      throw new EngineError(
        'executor_error',
        'HAVING keeps the groups of a grouped query: select an aggregate (`{ category COUNT(*) } HAVING count > 5`), or test rows in the filter after the table name.',
      );
    }
    const orderBy = distinctSorts(sub.orderBy).map((sort): PlanSort => {
      const descending = sort.direction === 'DESC';
      const segments = sort.field.segments;
      if (sort.field.aggregate && aggregates.length === 0) {
        throw new EngineError(
          'executor_error',
          `ORDER BY ${renderAggregate(sort.field.aggregate)} sorts the groups of a grouped query: select the aggregate too.`,
        );
      }
      if (aggregates.length > 0) {
        const name = segments.join('.');
        const output = sort.field.json ? undefined : outputs.find((o) => o.key === name);
        if (segments.length === 1 && output?.kind === 'aggregate') {
          return { source: { kind: 'aggregate', key: name }, descending };
        }
        if (sort.field.aggregate) {
          const hidden = this.hiddenAggregate(table, sort.field.aggregate, aggregates);
          return { source: { kind: 'aggregate', key: hidden.key }, descending };
        }
        if (output?.kind !== 'column') {
          throw new EngineError(
            'executor_error',
            `ORDER BY ${sort.field.aggregate ? renderAggregate(sort.field.aggregate) : `"${shown(name)}"`} must name a selected field or aggregate of a grouped query.`,
          );
        }
        return { source: { kind: 'column', via: [], column: output.column }, descending };
      }
      const { via, column } = this.resolvePath(table, sort.field);
      const json = sort.field.json;
      if (json) requireJson(column, jsonPathText(column.name, json));
      if (column.type === 'array')
        throw new EngineError('executor_error', arrayMisuse(column.name));
      const toMany = via.find((relation) => relation.kind === 'reverse');
      if (toMany) {
        throw new EngineError(
          'executor_error',
          `ORDER BY cannot sort on "${segments.join('.')}": "${toMany.name}" is a to-many relation.`,
        );
      }
      return {
        source: json ? { kind: 'column', via, column, json } : { kind: 'column', via, column },
        descending,
      };
    });
    return {
      table,
      filter: sub.filter ? this.filter(table, sub.filter) : null,
      outputs,
      aggregates,
      groupBy,
      having: sub.having ? this.having(table, sub.having, outputs, aggregates) : null,
      orderBy,
      limit: sub.limit ?? defaultLimit,
      offset: sub.offset ?? 0,
    };
  }

  selectionItem(
    table: CompiledTable,
    item: SelectionItem,
    put: (output: PlanOutput, generated: boolean) => void,
    aggregates: PlanAggregate[],
  ): void {
    switch (item.kind) {
      case 'allScalars':
      case 'allWithRelations':
        for (const column of table.columns) put({ kind: 'column', key: column.name, column }, true);
        if (item.kind === 'allWithRelations') {
          for (const relation of table.relations) {
            const target = targetOf(this.#schema, relation);
            const sub = this.wildcardSub(target, relation.kind === 'forward');
            put({ kind: 'relation', key: relation.name, relation, sub }, true);
          }
        }
        return;
      case 'field': {
        const column = table.columnsByName.get(item.name);
        if (column && item.json) {
          requireJson(column, jsonPathText(column.name, item.json));
          put(
            { kind: 'json', key: jsonOutputKey(column.name, item.json), column, steps: item.json },
            false,
          );
          return;
        }
        if (column) {
          put({ kind: 'column', key: column.name, column }, false);
          return;
        }
        const relation = table.relationsByName.get(item.name);
        if (relation) {
          // A bare relation name selects its scalar fields.
          const sub = this.wildcardSub(
            targetOf(this.#schema, relation),
            relation.kind === 'forward',
          );
          put({ kind: 'relation', key: relation.name, relation, sub }, false);
          return;
        }
        if (this.#lenient) return;
        throw unknownField(table, item.name);
      }
      case 'relation': {
        const relation = table.relationsByName.get(item.name);
        if (!relation) {
          // A known field misused is an error even under @lenient, which drops unknown ones.
          if (table.columnsByName.has(item.name)) {
            throw new EngineError(
              'executor_error',
              `"${item.name}" on table "${table.name}" is a field, not a relation: it takes no nested selection.`,
            );
          }
          if (this.#lenient) return;
          throw unknownRelation(table, item.name);
        }
        const toOne = relation.kind === 'forward';
        const target = targetOf(this.#schema, relation);
        const sub = this.subQuery(target, item.query, toOne ? null : this.#nestedLimit(), toOne);
        put({ kind: 'relation', key: relation.name, relation, sub }, false);
        return;
      }
      case 'aggregate': {
        const aggregate = this.aggregate(table, item, this.#lenient);
        if (aggregate !== null) aggregates.push(aggregate);
        return;
      }
    }
  }

  /** An aggregate's call checked against `table`; null for an unknown field when `lenient`. */
  aggregate(table: CompiledTable, call: AggregateCall, lenient: boolean): PlanAggregate | null {
    let column: CompiledColumn | null = null;
    if (call.field !== null) {
      const found = table.columnsByName.get(call.field);
      if (!found) {
        if (lenient) return null;
        throw unknownField(table, call.field);
      }
      if (found.type === 'array') throw new EngineError('executor_error', arrayMisuse(found.name));
      if ((call.fn === 'SUM' || call.fn === 'AVG') && !NUMERIC.has(found.type)) {
        const hint = found.type === 'json' ? '' : ' MIN and MAX take fields of any type.';
        throw new EngineError(
          'executor_error',
          `${call.fn} needs a numeric field; "${found.name}" is ${found.type}.${hint}`,
        );
      }
      column = found;
    }
    return { key: aggregateKey(call), fn: call.fn, column, distinct: call.distinct };
  }

  /**
   * An aggregate HAVING or ORDER BY names by its call but the selection does not show: computed
   * with the others (once, however often it is named), written in no row.
   */
  hiddenAggregate(
    table: CompiledTable,
    call: AggregateCall,
    aggregates: PlanAggregate[],
  ): PlanAggregate {
    const key = aggregateKey(call);
    const known = aggregates.find((aggregate) => aggregate.key === key);
    if (known) return known;
    const aggregate = this.aggregate(table, call, false) as PlanAggregate;
    aggregates.push(aggregate);
    return aggregate;
  }

  wildcardSub(target: CompiledTable, toOne: boolean): PlanSubQuery {
    return {
      table: target,
      filter: null,
      outputs: target.columns.map((column) => ({ kind: 'column', key: column.name, column })),
      aggregates: [],
      groupBy: [],
      having: null,
      orderBy: [],
      limit: toOne ? null : this.#nestedLimit(),
      offset: 0,
    };
  }

  #nestedLimit(): number | null {
    return this.#options.nestedDefaultLimit === 0 ? null : this.#options.nestedDefaultLimit;
  }
}

function echoSelection(items: readonly SelectionItem[]): {
  fields: string[];
  aggregates: string[];
} {
  const fields: string[] = [];
  const aggregates: string[] = [];
  for (const item of items) {
    if (item.kind === 'field') fields.push(jsonPathText(item.name, item.json ?? []));
    else if (item.kind === 'relation') fields.push(item.name);
    else if (item.kind === 'allScalars') fields.push('*');
    else if (item.kind === 'allWithRelations') fields.push('...');
    else aggregates.push(renderAggregate(item));
  }
  return { fields, aggregates };
}

/**
 * Checks a parsed query against the schema and resolves it into a plan: over a structural limit
 * (`QUERY_LIMITS`) → 400 `query_too_complex`, checked first; unknown table → 404
 * `unknown_table`; unknown fields (in the selection unless `@lenient`, in filters and ORDER BY
 * always), type mismatches and misuse of AFTER → 400 `executor_error`. Repeated ORDER BY keys
 * are dropped, in the plan and in `meta.query.order_by` alike. `slots`, when given, receives
 * where the plan holds literal values (see `LiteralSlot`).
 */
export function validateQuery(
  schema: CompiledSchema,
  query: Query,
  options: ValidateOptions,
  slots?: LiteralSlot[],
): QueryPlan {
  checkQueryLimits(query);
  const table = schema.tablesByName.get(query.table.name);
  if (!table) {
    throw new EngineError(
      'unknown_table',
      `Unknown table "${shown(query.table.name)}".${didYouMean(
        query.table.name,
        schema.tables.map((t) => t.name),
      )}`,
    );
  }
  const validator = new Validator(schema, options, query.lenient, slots);
  const plan = validator.subQuery(table, query, options.defaultLimit, false);

  if (query.after !== null) {
    const key =
      table.primaryKey.length === 1 ? table.columns[table.primaryKey[0] as number] : undefined;
    if (!key || !['int', 'bigint', 'string'].includes(key.type)) {
      throw new EngineError(
        'executor_error',
        `AFTER needs a table with a single-column integer or text primary key; "${table.name}" has ${table.primaryKey.length > 1 ? 'a composite primary key' : key ? `a ${key.type} primary key` : 'no primary key'}.`,
      );
    }
    if (plan.aggregates.length > 0) {
      throw new EngineError('executor_error', 'AFTER cannot be combined with aggregates.');
    }
    if (plan.orderBy.length > 0) {
      throw new EngineError(
        'executor_error',
        'AFTER pages in primary-key order and cannot be combined with ORDER BY.',
      );
    }
  }

  const { fields, aggregates } = echoSelection(query.selection);
  const echo: Record<string, unknown> = {};
  if (fields.length) echo.fields = fields;
  if (aggregates.length) echo.aggregates = aggregates;
  if (query.filter) echo.filter = renderCondition(query.filter);
  if (query.having) echo.having = renderCondition(query.having);
  if (query.orderBy.length) {
    echo.order_by = distinctSorts(query.orderBy).map((sort) => ({
      field: jsonPathText(sort.field.segments.join('.'), sort.field.json ?? []),
      direction: sort.direction,
    }));
  }
  if (query.limit !== null) echo.limit = query.limit;
  if (query.offset !== null) echo.offset = query.offset;
  return { ...plan, after: query.after, echo, echoJson: JSON.stringify(echo) };
}
