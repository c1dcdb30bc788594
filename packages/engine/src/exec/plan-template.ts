import type { Condition, Literal, Query, ShapeLiteral } from '@replix/query';
import type { CompiledSchema } from '../schema/compiled-schema.ts';
import type { PlanFilter, PlanHaving, PlanOutput, PlanSubQuery, QueryPlan } from './plan.ts';
import {
  type LiteralSlot,
  type ResolveLiteral,
  renderCondition,
  renderLiteral,
  type ValidateOptions,
  validateQuery,
} from './validate.ts';

/**
 * A validated plan of one query shape (`queryShape`), and where its literals went: binding
 * another query of the same shape converts that query's literals into the same leaves, in
 * the order validation converted them, so a bad literal fails with the error validation gives.
 */
export interface PlanTemplate {
  readonly plan: QueryPlan;
  readonly slots: readonly LiteralSlot[];
  /** The top-level filter as parsed, rendered again for `meta.query.filter`. */
  readonly filter: Condition | null;
  /** The top-level HAVING as parsed, rendered again for `meta.query.having`. */
  readonly having: Condition | null;
  /**
   * Where each lifted literal started in the text the template was made from, in text order
   * (so a literal's index is found by binary search): 4 bytes a literal, where a map took ~50.
   */
  readonly starts: Int32Array;
  /** `meta.query.filter` and `meta.query` as text around the lifted literals; null: rendered. */
  readonly echo: EchoPieces | null;
}

/**
 * The filter's text for `meta.query.filter` as the texts between its lifted literals, and the
 * JSON of `meta.query` as the texts before and after that filter's JSON: binding writes the
 * literals in between instead of rendering the filter and stringifying the echo again.
 */
interface EchoPieces {
  /** One more than `literals`: text, literal, text, ..., literal, text. */
  readonly texts: readonly string[];
  /** Which lifted literal (its index in text order) goes after `texts[i]`. */
  readonly literals: readonly number[];
  readonly jsonHead: string;
  readonly jsonTail: string;
}

/** Stands for a lifted literal in a filter rendered for `echoPieces`; no name or value has it. */
const MARK = '\u0000';
const FILTER_MARKED = `"filter":${JSON.stringify(MARK)}`;

/** Validates `query` (as `validateQuery`) into a template for every query of its shape. */
export function makeTemplate(
  schema: CompiledSchema,
  query: Query,
  literals: readonly ShapeLiteral[],
  options: ValidateOptions,
): PlanTemplate {
  const slots: LiteralSlot[] = [];
  const plan = validateQuery(schema, query, options, slots);
  const starts = Int32Array.from(literals, (literal) => literal.span.start);
  // The pieces hold one condition's literals: with a HAVING beside it, the echo is rendered.
  const echo =
    query.filter && !query.having ? echoPieces(query.filter, plan, starts, literals) : null;
  return { plan, slots, filter: query.filter, having: query.having, starts, echo };
}

/**
 * The echo's pieces, or null when the filter's text cannot be cut at marks (a name holding the
 * mark): the pieces must give back the template's own echo exactly, or they are not used.
 */
function echoPieces(
  filter: Condition,
  plan: QueryPlan,
  starts: Int32Array,
  literals: readonly ShapeLiteral[],
): EchoPieces | null {
  const marked = renderCondition(filter, (literal) => {
    if (literal.kind !== 'string' && literal.kind !== 'number') return literal;
    const index = indexOf(starts, literal.span.start);
    return index < 0
      ? literal
      : { kind: 'number', text: `${MARK}${index}${MARK}`, span: literal.span };
  });
  const parts = marked.split(MARK);
  const texts: string[] = [];
  const order: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) texts.push(parts[i] as string);
    else {
      const index = Number(parts[i]);
      if (!Number.isInteger(index) || index < 0 || index >= literals.length) return null;
      order.push(index);
    }
  }
  if (texts.length !== order.length + 1) return null;
  const json = JSON.stringify({ ...plan.echo, filter: MARK });
  const at = json.indexOf(FILTER_MARKED);
  if (at < 0) return null;
  const pieces: EchoPieces = {
    texts,
    literals: order,
    jsonHead: json.slice(0, at + '"filter":'.length),
    jsonTail: json.slice(at + FILTER_MARKED.length),
  };
  const own = renderedEcho(pieces, literals);
  return own.filter === plan.echo.filter && own.json === plan.echoJson ? pieces : null;
}

/** `meta.query.filter` and the JSON of `meta.query` with `literals` in the pieces' places. */
function renderedEcho(
  pieces: EchoPieces,
  literals: readonly ShapeLiteral[],
): { filter: string; json: string } {
  const { texts, literals: order } = pieces;
  let filter = texts[0] as string;
  for (let i = 0; i < order.length; i++) {
    filter +=
      renderLiteral(literals[order[i] as number] as ShapeLiteral) + (texts[i + 1] as string);
  }
  return { filter, json: pieces.jsonHead + JSON.stringify(filter) + pieces.jsonTail };
}

/**
 * The plan of a query of the template's shape whose lifted literals are `literals` (in text
 * order): the template's plan with the leaves that hold literal values rebuilt, and the echo of
 * its filter rendered with them. Throws `EngineError` for a literal its field cannot hold.
 */
export function bindTemplate(template: PlanTemplate, literals: readonly ShapeLiteral[]): QueryPlan {
  const { plan, slots } = template;
  if (slots.length === 0) return plan;
  const resolve: ResolveLiteral = (literal: Literal) => {
    if (literal.kind !== 'string' && literal.kind !== 'number') return literal;
    const index = indexOf(template.starts, literal.span.start);
    return index < 0 ? literal : (literals[index] as ShapeLiteral);
  };
  const only = slots.length === 1 ? (slots[0] as LiteralSlot) : undefined;
  let sub: QueryPlan;
  // A filter of one condition (a lookup): its leaf is the plan's filter, nothing to look for.
  if (only !== undefined && only.leaf === plan.filter) {
    sub = { ...plan, filter: only.bind(resolve) as PlanFilter };
  } else {
    const bound: Bound = new Map();
    for (const slot of slots) bound.set(slot.leaf, slot.bind(resolve));
    sub = bindSub(plan, bound);
  }
  if (template.echo !== null) {
    const { filter, json } = renderedEcho(template.echo, literals);
    return { ...sub, after: plan.after, echo: { ...plan.echo, filter }, echoJson: json };
  }
  const echo: Record<string, unknown> = { ...plan.echo };
  if (template.filter) echo.filter = renderCondition(template.filter, resolve);
  if (template.having) echo.having = renderCondition(template.having, resolve);
  return { ...sub, after: plan.after, echo, echoJson: JSON.stringify(echo) };
}

/** The index of `start` in the ascending `starts`, or -1. */
function indexOf(starts: Int32Array, start: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = starts[middle] as number;
    if (at === start) return middle;
    if (at < start) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** Each slot's leaf, to the leaf bound in its place (a filter's for a filter's, and so on). */
type Bound = Map<PlanFilter | PlanHaving, PlanFilter | PlanHaving>;

/** `sub` with its bound leaves replaced; the same object when none is inside it. */
function bindSub<T extends PlanSubQuery>(sub: T, bound: Bound): T {
  const filter = sub.filter && bindFilter(sub.filter, bound);
  const having = sub.having && bindHaving(sub.having, bound);
  let outputs: PlanOutput[] | null = null;
  for (let i = 0; i < sub.outputs.length; i++) {
    const output = sub.outputs[i] as PlanOutput;
    if (output.kind !== 'relation') continue;
    const nested = bindSub(output.sub, bound);
    if (nested === output.sub) continue;
    outputs ??= [...sub.outputs];
    outputs[i] = { ...output, sub: nested };
  }
  if (filter === sub.filter && having === sub.having && outputs === null) return sub;
  return { ...sub, filter, having, outputs: outputs ?? sub.outputs };
}

function bindHaving(having: PlanHaving, bound: Bound): PlanHaving {
  const leaf = bound.get(having) as PlanHaving | undefined;
  if (leaf) return leaf;
  switch (having.kind) {
    case 'and':
    case 'or': {
      const operands = having.operands.map((operand) => bindHaving(operand, bound));
      return operands.every((operand, i) => operand === having.operands[i])
        ? having
        : { kind: having.kind, operands };
    }
    case 'row': {
      const filter = bindFilter(having.filter, bound);
      return filter === having.filter ? having : { ...having, filter };
    }
    default:
      return having;
  }
}

function bindFilter(filter: PlanFilter, bound: Bound): PlanFilter {
  const leaf = bound.get(filter) as PlanFilter | undefined;
  if (leaf) return leaf;
  switch (filter.kind) {
    case 'and':
    case 'or': {
      let operands: PlanFilter[] | null = null;
      for (let i = 0; i < filter.operands.length; i++) {
        const operand = filter.operands[i] as PlanFilter;
        const next = bindFilter(operand, bound);
        if (next === operand) continue;
        operands ??= [...filter.operands];
        operands[i] = next;
      }
      return operands ? { kind: filter.kind, operands } : filter;
    }
    case 'related': {
      const inner = bindFilter(filter.filter, bound);
      return inner === filter.filter ? filter : { ...filter, filter: inner };
    }
    default:
      return filter;
  }
}
