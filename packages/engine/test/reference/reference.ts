/**
 * A naive reference implementation of the query language for tests: the same source rows as
 * the engine gets (plain arrays of canonical values), evaluated by brute force over plain
 * objects. Obviously correct rather than fast: linear scans everywhere, exact arithmetic, no
 * indexes, no caches. AFTER is not modelled (after-paging.test.ts has its own model).
 *
 * The semantics it encodes (spec §4.2 and the engine issue's decisions):
 * - NULL follows SQL: a comparison with NULL is false, `!=` excludes NULLs, only IS [NOT] NULL
 *   matches them; text compares in code point order.
 * - ORDER BY: NULLs last ascending, first descending; ties by primary key ascending, then by
 *   storage order. Without ORDER BY, storage order.
 * - Relations are named from foreign keys: forward = the FK column minus `_id`, reverse = the
 *   referencing table; on a collision `<other table>_by_<fk columns>`. A dot path through a
 *   to-many relation matches when at least one related row does.
 * - LIMIT defaults to 1000; nested to-many selections to `nestedDefaultLimit` (0 = unbounded).
 * - Aggregates: COUNT(*), COUNT(f) (non-NULL), SUM(f) → `sum_f`, AVG(f) → `avg_f`; every other
 *   selected field is a GROUP BY key; groups come in first-seen order; SUM/AVG over no value
 *   is null; `total_matched` counts groups; ORDER BY an integer or decimal SUM/AVG compares
 *   its exact value, not the printed double. MIN(f) → `min_f` and MAX(f) → `max_f` print the
 *   extreme value as the field prints, COUNT(DISTINCT f) → `count_distinct_f` counts distinct
 *   non-NULL values; HAVING tests keys, MIN and MAX as fields and the other aggregates as their
 *   exact numbers (AVG is not modelled there).
 */
import {
  type AggregateFunction,
  aggregateKey,
  type Condition,
  type Path,
  parseQuery,
  type Query,
  type SelectionItem,
  type SortItem,
  type SubQuery,
} from '@replix/query';
import type { ColumnType, SourceSchema, SourceTable } from '../../src/source-schema.ts';
import { like } from './like.ts';
import {
  compareRatios,
  compareValues,
  type ExactRatio,
  exactAverage,
  exactRatio,
  exactSum,
  literalToCanonical,
  valueToJson,
} from './values.ts';

export interface ReferenceOptions {
  /** Top-level LIMIT when the query has none. */
  readonly defaultLimit?: number;
  /** LIMIT of nested to-many selections without one; 0 = unbounded. */
  readonly nestedDefaultLimit?: number;
}

export interface ReferenceRelation {
  readonly name: string;
  readonly kind: 'forward' | 'reverse';
  readonly target: string;
  readonly localColumns: readonly string[];
  readonly targetColumns: readonly string[];
}

interface Row {
  readonly values: Readonly<Record<string, unknown>>;
  /** Position in storage order. */
  readonly position: number;
}

interface RefTable {
  readonly source: SourceTable;
  readonly rows: readonly Row[];
  readonly relations: readonly ReferenceRelation[];
}

export interface ReferenceResult {
  readonly data: unknown[];
  readonly totalMatched: number;
  readonly hasMore: boolean;
}

type Output =
  | { kind: 'column'; key: string }
  | { kind: 'relation'; key: string; relation: ReferenceRelation; sub: SubQuery }
  | {
      kind: 'aggregate';
      key: string;
      fn: AggregateFunction;
      field: string | null;
      distinct: boolean;
    };

const NO_SPAN = { start: 0, end: 0 };
/** What a bare relation name or `...` selects: every scalar field of the target. */
const ALL_SCALARS: SubQuery = {
  filter: null,
  having: null,
  selection: [{ kind: 'allScalars', span: NO_SPAN }],
  orderBy: [],
  limit: null,
  offset: null,
};

/** The relations of every table, named by the spec's rule (no aliases). */
export function referenceRelations(schema: SourceSchema): Map<string, ReferenceRelation[]> {
  const drafts = new Map<string, (ReferenceRelation & { fallback: string })[]>();
  for (const table of schema.tables) drafts.set(table.name, []);
  for (const table of schema.tables) {
    for (const fk of table.foreignKeys) {
      if (!drafts.has(fk.referencedTable)) continue;
      const only = fk.columns.length === 1 ? (fk.columns[0] as string) : '';
      const forward =
        only.toLowerCase().endsWith('_id') && only.length > 3
          ? only.slice(0, -3)
          : fk.referencedTable;
      const by = fk.columns.join('_');
      drafts.get(table.name)?.push({
        name: forward,
        fallback: `${fk.referencedTable}_by_${by}`,
        kind: 'forward',
        target: fk.referencedTable,
        localColumns: fk.columns,
        targetColumns: fk.referencedColumns,
      });
      drafts.get(fk.referencedTable)?.push({
        name: table.name,
        fallback: `${table.name}_by_${by}`,
        kind: 'reverse',
        target: table.name,
        localColumns: fk.referencedColumns,
        targetColumns: fk.columns,
      });
    }
  }
  const result = new Map<string, ReferenceRelation[]>();
  for (const table of schema.tables) {
    const own = drafts.get(table.name) ?? [];
    const columns = table.columns.map((c) => c.name);
    result.set(
      table.name,
      own.map(({ fallback, ...relation }) => {
        const clash =
          own.filter((other) => other.name === relation.name).length > 1 ||
          columns.includes(relation.name);
        return clash ? { ...relation, name: fallback } : relation;
      }),
    );
  }
  return result;
}

export class ReferenceDb {
  readonly #tables = new Map<string, RefTable>();
  readonly #defaultLimit: number;
  readonly #nestedDefaultLimit: number;

  constructor(
    schema: SourceSchema,
    rows: Readonly<Record<string, readonly (readonly unknown[])[]>>,
    options: ReferenceOptions = {},
  ) {
    this.#defaultLimit = options.defaultLimit ?? 1000;
    this.#nestedDefaultLimit = options.nestedDefaultLimit ?? 1000;
    const relations = referenceRelations(schema);
    for (const source of schema.tables) {
      const tableRows = (rows[source.name] ?? []).map((row, position) => ({
        values: Object.fromEntries(
          source.columns.map((column, c) => [column.name, row[c] ?? null]),
        ),
        position,
      }));
      this.#tables.set(source.name, {
        source,
        rows: tableRows,
        relations: relations.get(source.name) ?? [],
      });
    }
  }

  /** Evaluates a query, given as text or as the syntax tree `parseQuery` makes of it. */
  run(input: string | Query): ReferenceResult {
    const query = typeof input === 'string' ? parseQuery(input) : input;
    if (query.after !== null) throw new Error('reference: AFTER is not modelled');
    const table = this.#table(query.table.name);
    return this.#subQuery(table, query, table.rows, this.#defaultLimit, query.lenient);
  }

  #table(name: string): RefTable {
    const table = this.#tables.get(name);
    if (!table) throw new Error(`reference: no table ${name}`);
    return table;
  }

  #type(table: RefTable, column: string): ColumnType {
    const found = table.source.columns.find((c) => c.name === column);
    if (!found) throw new Error(`reference: no column ${table.source.name}.${column}`);
    return found.type;
  }

  #relation(table: RefTable, name: string): ReferenceRelation | undefined {
    return table.relations.find((r) => r.name === name);
  }

  /** The rows `relation` reaches from `row`: at most one forward, any number in storage order reverse. */
  #related(table: RefTable, relation: ReferenceRelation, row: Row): Row[] {
    const target = this.#table(relation.target);
    const found = target.rows.filter((candidate) =>
      relation.localColumns.every((local, i) => {
        const mine = row.values[local];
        const theirs = candidate.values[relation.targetColumns[i] as string];
        if (mine === null || theirs === null) return false;
        return compareValues(this.#type(table, local), mine, theirs) === 0;
      }),
    );
    return relation.kind === 'forward' ? found.slice(0, 1) : found;
  }

  /** Walks the relations of `path` from `row`; the rows where its last segment is read. */
  #walk(table: RefTable, row: Row, path: Path): { table: RefTable; rows: Row[]; column: string } {
    let current = table;
    let rows = [row];
    const segments = path.segments;
    for (const name of segments.slice(0, -1)) {
      const relation = this.#relation(current, name);
      if (!relation) throw new Error(`reference: no relation ${current.source.name}.${name}`);
      const here = current;
      rows = rows.flatMap((r) => this.#related(here, relation, r));
      current = this.#table(relation.target);
    }
    return { table: current, rows, column: segments[segments.length - 1] as string };
  }

  #matches(table: RefTable, row: Row, condition: Condition): boolean {
    if (condition.kind === 'and')
      return condition.operands.every((c) => this.#matches(table, row, c));
    if (condition.kind === 'or')
      return condition.operands.some((c) => this.#matches(table, row, c));
    const reached = this.#walk(table, row, condition.field);
    const type = this.#type(reached.table, reached.column);
    return reached.rows.some((r) => leafMatches(type, r.values[reached.column] ?? null, condition));
  }

  /** A sort key: the value at the end of a path of to-one relations, or null. */
  #sortValue(table: RefTable, row: Row, sort: SortItem): { type: ColumnType; value: unknown } {
    const reached = this.#walk(table, row, sort.field);
    const first = reached.rows[0];
    return {
      type: this.#type(reached.table, reached.column),
      value: first === undefined ? null : (first.values[reached.column] ?? null),
    };
  }

  #selection(table: RefTable, items: readonly SelectionItem[], lenient: boolean): Output[] {
    const outputs = new Map<string, { output: Output; explicit: boolean }>();
    const put = (output: Output, explicit: boolean) => {
      const existing = outputs.get(output.key);
      if (!existing || (!existing.explicit && explicit))
        outputs.set(output.key, { output, explicit });
    };
    const aggregates: Output[] = [];
    for (const item of items) {
      switch (item.kind) {
        case 'allScalars':
        case 'allWithRelations':
          for (const column of table.source.columns)
            put({ kind: 'column', key: column.name }, false);
          if (item.kind === 'allWithRelations') {
            for (const relation of table.relations) {
              put({ kind: 'relation', key: relation.name, relation, sub: ALL_SCALARS }, false);
            }
          }
          break;
        case 'field': {
          const relation = this.#relation(table, item.name);
          if (table.source.columns.some((c) => c.name === item.name))
            put({ kind: 'column', key: item.name }, true);
          else if (relation)
            put({ kind: 'relation', key: item.name, relation, sub: ALL_SCALARS }, true);
          else if (!lenient) throw new Error(`reference: unknown field ${item.name}`);
          break;
        }
        case 'relation': {
          const relation = this.#relation(table, item.name);
          if (relation) put({ kind: 'relation', key: item.name, relation, sub: item.query }, true);
          else if (!lenient) throw new Error(`reference: unknown relation ${item.name}`);
          break;
        }
        case 'aggregate': {
          if (item.field !== null && !table.source.columns.some((c) => c.name === item.field)) {
            if (lenient) break;
            throw new Error(`reference: unknown field ${item.field}`);
          }
          aggregates.push({
            kind: 'aggregate',
            key: aggregateKey(item),
            fn: item.fn,
            field: item.field,
            distinct: item.distinct,
          });
          break;
        }
      }
    }
    return [...[...outputs.values()].map((o) => o.output), ...aggregates];
  }

  #subQuery(
    table: RefTable,
    sub: SubQuery,
    candidates: readonly Row[],
    defaultLimit: number | null,
    lenient: boolean,
  ): ReferenceResult {
    const matched = candidates.filter(
      (row) => sub.filter === null || this.#matches(table, row, sub.filter),
    );
    const outputs = this.#selection(table, sub.selection, lenient);
    const limit = sub.limit ?? defaultLimit;
    const offset = sub.offset ?? 0;
    const window = <T>(items: readonly T[]) =>
      items.slice(offset, limit === null ? undefined : offset + limit);
    if (outputs.some((o) => o.kind === 'aggregate')) {
      const groups = this.#groups(table, outputs, matched, sub.orderBy, sub.having);
      const page = window(groups);
      return {
        data: page,
        totalMatched: groups.length,
        hasMore: offset + page.length < groups.length,
      };
    }
    const sorted = [...matched];
    if (sub.orderBy.length > 0) {
      const pk = table.source.primaryKey;
      sorted.sort((a, b) => {
        for (const sort of sub.orderBy) {
          const x = this.#sortValue(table, a, sort);
          const y = this.#sortValue(table, b, sort);
          const order = compareNullable(x.type, x.value, y.value, sort.direction === 'DESC');
          if (order !== 0) return order;
        }
        for (const column of pk) {
          const order = compareNullable(
            this.#type(table, column),
            a.values[column],
            b.values[column],
            false,
          );
          if (order !== 0) return order;
        }
        return a.position - b.position;
      });
    }
    const page = window(sorted);
    return {
      data: page.map((row) => this.#rowObject(table, row, outputs, lenient)),
      totalMatched: matched.length,
      hasMore: offset + page.length < matched.length,
    };
  }

  #rowObject(
    table: RefTable,
    row: Row,
    outputs: readonly Output[],
    lenient: boolean,
  ): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (const output of outputs) {
      if (output.kind === 'column') {
        object[output.key] = valueToJson(this.#type(table, output.key), row.values[output.key]);
      } else if (output.kind === 'relation') {
        const target = this.#table(output.relation.target);
        const related = this.#related(table, output.relation, row);
        if (output.relation.kind === 'forward') {
          object[output.key] =
            this.#subQuery(target, output.sub, related, null, lenient).data[0] ?? null;
        } else {
          const nested = this.#nestedDefaultLimit === 0 ? null : this.#nestedDefaultLimit;
          object[output.key] = this.#subQuery(target, output.sub, related, nested, lenient).data;
        }
      }
    }
    return object;
  }

  /** GROUP BY the column outputs, aggregate, then ORDER BY (ties: first-seen order). */
  #groups(
    table: RefTable,
    outputs: readonly Output[],
    rows: readonly Row[],
    orderBy: readonly SortItem[],
    having: Condition | null,
  ): Record<string, unknown>[] {
    const keys = outputs.flatMap((o) => (o.kind === 'column' ? [o.key] : []));
    const sameKey = (a: Row, b: Row) =>
      keys.every((key) => {
        const x = a.values[key] ?? null;
        const y = b.values[key] ?? null;
        if (x === null || y === null) return x === y;
        return compareValues(this.#type(table, key), x, y) === 0;
      });
    const groups: Row[][] = [];
    for (const row of rows) {
      const group = groups.find((g) => sameKey(g[0] as Row, row));
      if (group) group.push(row);
      else groups.push([row]);
    }
    // Without GROUP BY keys there is exactly one result row, even over no rows.
    if (groups.length === 0 && keys.length === 0) groups.push([]);
    if (having !== null) {
      const kept = groups.filter((group) => this.#groupMeets(table, outputs, group, having));
      groups.splice(0, groups.length, ...kept);
    }
    const objects = groups.map((group) => {
      const object: Record<string, unknown> = {};
      for (const output of outputs) {
        if (output.kind === 'column') {
          const first = group[0];
          object[output.key] = first
            ? valueToJson(this.#type(table, output.key), first.values[output.key])
            : null;
        } else if (output.kind === 'aggregate') {
          object[output.key] = this.#aggregate(table, output, group);
        }
      }
      return object;
    });
    const order = objects.map((object, index) => ({
      object,
      first: groups[index]?.[0],
      exact: this.#exactAggregates(table, outputs, groups[index] ?? []),
      index,
    }));
    order.sort((a, b) => {
      for (const sort of orderBy) {
        const name = sort.field.segments.join('.');
        const isColumn = outputs.some((o) => o.kind === 'column' && o.key === name);
        const descending = sort.direction === 'DESC';
        // Integer and decimal SUM/AVG sort by their exact value, as the engine does: two
        // averages that print as the same double may still differ.
        const x = a.exact.get(name);
        const y = b.exact.get(name);
        if (x !== undefined && y !== undefined) {
          const result = compareRatios(x, y);
          if (result !== 0) return descending ? -result : result;
          continue;
        }
        // Group keys sort by their stored value, MIN and MAX by theirs, other aggregates by
        // their number.
        const extreme = outputs.find(
          (o) => o.kind === 'aggregate' && o.key === name && (o.fn === 'MIN' || o.fn === 'MAX'),
        ) as (Output & { kind: 'aggregate' }) | undefined;
        if (extreme !== undefined) {
          const type = this.#type(table, extreme.field as string);
          const u = this.#extreme(table, extreme, groups[a.index] ?? []);
          const v = this.#extreme(table, extreme, groups[b.index] ?? []);
          const result = compareNullable(type, u, v, descending);
          if (result !== 0) return result;
          continue;
        }
        const type: ColumnType = isColumn ? this.#type(table, name) : 'float';
        const u = isColumn ? (a.first?.values[name] ?? null) : a.object[name];
        const v = isColumn ? (b.first?.values[name] ?? null) : b.object[name];
        const result = compareNullable(type, u, v, descending);
        if (result !== 0) return result;
      }
      return a.index - b.index;
    });
    return order.map((o) => o.object);
  }

  /** Whether a group meets HAVING's `condition`. */
  #groupMeets(
    table: RefTable,
    outputs: readonly Output[],
    group: readonly Row[],
    condition: Condition,
  ): boolean {
    if (condition.kind === 'and') {
      return condition.operands.every((c) => this.#groupMeets(table, outputs, group, c));
    }
    if (condition.kind === 'or') {
      return condition.operands.some((c) => this.#groupMeets(table, outputs, group, c));
    }
    const name = condition.field.segments.join('.');
    const output = outputs.find((o) => o.key === name);
    if (output?.kind === 'column') {
      return leafMatches(this.#type(table, name), group[0]?.values[name] ?? null, condition);
    }
    if (output?.kind !== 'aggregate') throw new Error(`reference: HAVING on unknown ${name}`);
    if (output.field !== null && (output.fn === 'MIN' || output.fn === 'MAX')) {
      const type = this.#type(table, output.field);
      return leafMatches(type, this.#extreme(table, output, group), condition);
    }
    if (output.fn === 'AVG') throw new Error('reference: HAVING on AVG is not modelled');
    const value = this.#aggregate(table, output, group);
    const exact =
      output.fn === 'SUM' && value !== null && output.field !== null
        ? this.#sumText(table, output.field, group)
        : value;
    return leafMatches('decimal', exact === null ? null : String(exact), condition);
  }

  /** The exact sum of an integer or decimal field, as text; a double's for other fields. */
  #sumText(table: RefTable, field: string, rows: readonly Row[]): string {
    const type = this.#type(table, field);
    const values = rows.map((r) => r.values[field] ?? null).filter((v) => v !== null);
    if (type === 'int' || type === 'bigint' || type === 'decimal') {
      return exactSum(values.map(String));
    }
    return String(values.reduce((total: number, v) => total + (v as number), 0));
  }

  /** The value MIN or MAX picks among the group's non-NULL values (null for none). */
  #extreme(table: RefTable, output: Output & { kind: 'aggregate' }, rows: readonly Row[]): unknown {
    const field = output.field as string;
    const type = this.#type(table, field);
    let best: unknown = null;
    for (const row of rows) {
      const value = row.values[field] ?? null;
      if (value === null) continue;
      if (best === null) best = value;
      const order = compareValues(type, value, best);
      if (output.fn === 'MIN' ? order < 0 : order > 0) best = value;
    }
    return best;
  }

  /** The exact value of each integer or decimal SUM/AVG of a group that has one (not NULL). */
  #exactAggregates(
    table: RefTable,
    outputs: readonly Output[],
    rows: readonly Row[],
  ): Map<string, ExactRatio> {
    const exact = new Map<string, ExactRatio>();
    for (const output of outputs) {
      if (output.kind !== 'aggregate' || output.field === null) continue;
      if (output.fn !== 'SUM' && output.fn !== 'AVG') continue;
      const type = this.#type(table, output.field);
      if (type !== 'int' && type !== 'bigint' && type !== 'decimal') continue;
      const texts = rows
        .map((r) => r.values[output.field as string] ?? null)
        .filter((v) => v !== null)
        .map(String);
      if (texts.length === 0) continue;
      exact.set(output.key, exactRatio(texts, output.fn === 'AVG' ? texts.length : 1));
    }
    return exact;
  }

  #aggregate(
    table: RefTable,
    output: Output & { kind: 'aggregate' },
    rows: readonly Row[],
  ): unknown {
    if (output.field === null) return rows.length;
    const type = this.#type(table, output.field);
    const values = rows
      .map((r) => r.values[output.field as string] ?? null)
      .filter((v) => v !== null);
    if (output.distinct) {
      const distinct: unknown[] = [];
      for (const value of values) {
        if (!distinct.some((seen) => compareValues(type, seen, value) === 0)) distinct.push(value);
      }
      return distinct.length;
    }
    if (output.fn === 'COUNT') return values.length;
    if (output.fn === 'MIN' || output.fn === 'MAX') {
      return valueToJson(type, this.#extreme(table, output, rows));
    }
    if (values.length === 0) return null;
    if (type === 'int' || type === 'bigint' || type === 'decimal') {
      const texts = values.map(String);
      const sum = Number(exactSum(texts));
      if (output.fn === 'SUM') return sum;
      // AVG: DECIMAL to 4 more decimals; integers as a double quotient while the sum is below
      // 2^53, else exactly to 4 decimals.
      if (type === 'decimal' || Math.abs(sum) >= 2 ** 53) return Number(exactAverage(texts, 4));
      return sum / values.length;
    }
    const sum = values.reduce((total: number, v) => total + (v as number), 0);
    return output.fn === 'SUM' ? sum : sum / values.length;
  }
}

function compareNullable(type: ColumnType, a: unknown, b: unknown, descending: boolean): number {
  const x = a ?? null;
  const y = b ?? null;
  if (x === null && y === null) return 0;
  // NULLs last ascending, first descending.
  if (x === null) return descending ? -1 : 1;
  if (y === null) return descending ? 1 : -1;
  const order = compareValues(type, x, y);
  return descending ? -order : order;
}

function leafMatches(
  type: ColumnType,
  value: unknown,
  condition: Exclude<Condition, { kind: 'and' | 'or' }>,
): boolean {
  if (condition.kind === 'isNull') return condition.negated ? value !== null : value === null;
  if (value === null) return false;
  const equal = (literal: unknown) => literal !== null && compareValues(type, value, literal) === 0;
  switch (condition.kind) {
    case 'compare': {
      const literal = literalToCanonical(type, condition.value);
      if (literal === null) return false;
      const order = compareValues(type, value, literal);
      switch (condition.operator) {
        case '=':
          return order === 0;
        case '!=':
          return order !== 0;
        case '<':
          return order < 0;
        case '<=':
          return order <= 0;
        case '>':
          return order > 0;
        case '>=':
          return order >= 0;
      }
      break;
    }
    case 'like':
      return like(value as string, condition.pattern, condition.caseInsensitive);
    case 'in':
      return condition.values.some((literal) => equal(literalToCanonical(type, literal)));
    case 'between': {
      const low = literalToCanonical(type, condition.low);
      const high = literalToCanonical(type, condition.high);
      if (low === null || high === null) return false;
      return compareValues(type, value, low) >= 0 && compareValues(type, value, high) <= 0;
    }
  }
  return false;
}
