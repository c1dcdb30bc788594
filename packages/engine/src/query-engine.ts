import { performance } from 'node:perf_hooks';
import { parseQuery, QueryParseError, QueryTooComplexError, queryShape } from '@replix/query';
import { EngineError } from './errors.ts';
import { Executor, type QueryResult } from './exec/execute.ts';
import { JsonWriter, type QueryAnswer } from './exec/json-writer.ts';
import { DATA_OPEN, keepMetaHead, type ResponseMeta, writeMeta } from './exec/meta-json.ts';
import type { QueryPlan } from './exec/plan.ts';
import { bindTemplate, makeTemplate, type PlanTemplate } from './exec/plan-template.ts';
import {
  type CancelSignal,
  QueryBudget,
  type QueryLimits,
  runCooperatively,
  runToEnd,
} from './exec/query-budget.ts';
import { SeenTexts } from './exec/seen-texts.ts';
import { SizedCache } from './exec/sized-cache.ts';
import { boundPlanBytes, templateBytes } from './exec/template-bytes.ts';
import type { CompiledSchema } from './schema/compiled-schema.ts';
import type { Generation } from './storage/generation.ts';

export type { ResponseMeta } from './exec/meta-json.ts';

/** The LIMIT of a query without one (docs/instance-api.md). */
export const DEFAULT_LIMIT = 1000;
/**
 * Heap bytes the cached plans may hold, each counted by `templateBytes` (an upper bound of what
 * it keeps alive, from its structure): a count of entries, or their text, would bound nothing,
 * since a short text can make a big plan (`...` on a wide table) and a flood of distinct shapes
 * costs an attacker nothing (docs/limits.md).
 */
export const PLAN_CACHE_BYTES = 16 * 1024 * 1024;
/** The largest plan kept: a bigger one is planned for its query and not cached. */
export const PLAN_CACHE_MAX_ENTRY_BYTES = PLAN_CACHE_BYTES / 16;
/**
 * Heap bytes the plans kept by exact text may hold (`boundPlanBytes` each). Apart from the
 * shapes' budget, so a flood of distinct values of one shape (every id of a table, say) turns
 * over this cache only, never the templates of other shapes.
 */
export const PLAN_TEXT_CACHE_BYTES = 8 * 1024 * 1024;

export interface ExecuteOptions {
  /** Lowers the schema config's budgets (an instance size's cap on time, say). */
  readonly limits?: Partial<QueryLimits>;
  /** Cancels the query (its client went away). */
  readonly signal?: CancelSignal;
  /**
   * When the query's time budget started (`performance.now()`): a server starts it when the
   * request arrived, so time spent waiting for a turn counts too. Now, when absent.
   */
  readonly startedAt?: number;
  /** Milliseconds `plan(text)` took for this query: `meta.timing_ms` counts them too. */
  readonly planMs?: number;
}

/**
 * Parses, validates and runs queries against generations of one compiled schema, writing the
 * success envelope (docs/instance-api.md) as JSON text. Plans depend only on the schema, so they
 * are cached by shape (`queryShape`: the text with its literal values left out): a query that
 * differs from an earlier one only in its values skips parsing and validation, and only has
 * its values converted into the cached plan; and the bound plans of texts asked more than once are
 * kept too, so a query asked again in the same words (a hot page's lookup, a dashboard's
 * refresh) is not even scanned for its shape. Every run is held to the schema config's budgets
 * (`query.timeout_ms`, `max_rows`, `max_response_bytes`).
 */
export class QueryEngine {
  readonly schema: CompiledSchema;
  readonly limits: QueryLimits;
  /** By shape key; each entry counted as the heap bytes it holds (`templateBytes`). */
  readonly #templates = new SizedCache<{ template: PlanTemplate; size: number }>({
    maxBytes: PLAN_CACHE_BYTES,
  });
  /** By exact text: bound plans of texts asked more than once, each counted by `boundPlanBytes`. */
  readonly #plansByText = new SizedCache<QueryPlan>({ maxBytes: PLAN_TEXT_CACHE_BYTES });
  readonly #seenTexts = new SeenTexts();

  constructor(schema: CompiledSchema) {
    this.schema = schema;
    const query = schema.config.query;
    this.limits = {
      timeoutMs: query.timeout_ms,
      maxRows: query.max_rows,
      maxResponseBytes: query.max_response_bytes,
    };
  }

  /**
   * The plan of `text`: from the cache when a query of its shape was planned before, its
   * literals bound (a bad one fails as validation would fail it); else parsed and validated.
   * Throws `EngineError` (parse errors included, as code `parse_error`).
   */
  plan(text: string): QueryPlan {
    const known = this.#plansByText.get(text);
    if (known) return known;
    const shape = queryShape(text);
    const cached = shape && this.#templates.get(shape.key);
    if (cached) return this.#keep(text, bindTemplate(cached.template, shape.literals), cached.size);
    let query: ReturnType<typeof parseQuery>;
    try {
      query = parseQuery(text);
    } catch (error) {
      if (error instanceof QueryParseError) throw new EngineError('parse_error', error.message);
      if (error instanceof QueryTooComplexError) {
        throw new EngineError('query_too_complex', error.message);
      }
      throw error;
    }
    // A text that parses always lexes, so it has a shape.
    if (!shape) throw new Error('a query that parses has no shape');
    const template = makeTemplate(this.schema, query, shape.literals, {
      defaultLimit: DEFAULT_LIMIT,
      nestedDefaultLimit: this.schema.config.query.nested_default_limit,
    });
    const size = templateBytes({ text, shape, query, template });
    if (size > PLAN_CACHE_MAX_ENTRY_BYTES) return template.plan;
    this.#templates.set(shape.key, { template, size }, size);
    return this.#keep(text, template.plan, size);
  }

  /**
   * Keeps `plan` for its exact text when the text was asked before (plans are never changed
   * once made, so one serves every run of its text).
   */
  #keep(text: string, plan: QueryPlan, templateSize: number): QueryPlan {
    if (!this.#seenTexts.seenAgain(text)) return plan;
    const size = boundPlanBytes(text, templateSize);
    if (size <= PLAN_CACHE_MAX_ENTRY_BYTES) {
      this.#plansByText.set(text, plan, size);
      // Its answers' meta head in one copy from now on.
      keepMetaHead(plan);
    }
    return plan;
  }

  /**
   * The bytes the cached templates are counted as (at most `PLAN_CACHE_BYTES`) and how many;
   * likewise the plans kept by exact text (at most `PLAN_TEXT_CACHE_BYTES`).
   */
  get planCache(): {
    readonly bytes: number;
    readonly entries: number;
    readonly textBytes: number;
    readonly texts: number;
  } {
    return {
      bytes: this.#templates.bytes,
      entries: this.#templates.size,
      textBytes: this.#plansByText.bytes,
      texts: this.#plansByText.size,
    };
  }

  /**
   * Runs `text` against `generation` to its end without pausing, and returns the response
   * body: for tools and tests. Servers use `answer`.
   */
  execute(
    generation: Generation,
    text: string,
    meta: ResponseMeta,
    options: ExecuteOptions = {},
  ): string {
    const started = performance.now();
    const plan = this.plan(text);
    const planMs = (options.planMs ?? 0) + performance.now() - started;
    const { executor, finish } = this.#run(generation, plan, meta, { ...options, planMs });
    return finish(executor.lookup(plan) ?? runToEnd(executor.run(plan))).text();
  }

  /**
   * Runs `plan` (from `plan(text)`, which a server calls first to refuse a bad query before
   * anything else) against `generation`, pausing each few milliseconds so other requests are
   * served meanwhile: the response body in chunks, at once when the query ends within its first
   * slice (most do: no promise, no turn of the event loop), else a promise of it. Fails with
   * an `EngineError` (a budget error) or `QueryCancelledError`, thrown or rejected likewise.
   */
  answer(
    generation: Generation,
    plan: QueryPlan,
    meta: ResponseMeta,
    options: ExecuteOptions = {},
  ): QueryAnswer | Promise<QueryAnswer> {
    const { budget, executor, finish } = this.#run(generation, plan, meta, options);
    // A lookup of a few rows is answered by plain calls; any other query as work in slices.
    const looked = executor.lookup(plan);
    if (looked !== null) return finish(looked);
    return runCooperatively(executor.run(plan), budget, finish);
  }

  /** Sets a query up: its executor, then `finish` writes the meta and ends the answer. */
  #run(generation: Generation, plan: QueryPlan, meta: ResponseMeta, options: ExecuteOptions): Run {
    // meta.timing_ms: the engine's time for this query, planning included.
    const now = performance.now();
    const started = now - (options.planMs ?? 0);
    const limits = options.limits ? lowered(this.limits, options.limits) : this.limits;
    const budget = new QueryBudget(limits, options.signal, options.startedAt, now);
    const out = new JsonWriter(limits.maxResponseBytes);
    out.words(DATA_OPEN);
    const executor = new Executor(generation, budget, out);
    const finish = (result: QueryResult): QueryAnswer => {
      const timingMs = Math.round((performance.now() - started) * 1000) / 1000;
      writeMeta(out, plan, result, timingMs, meta);
      return out.finish(timingMs, result.count);
    };
    return { budget, executor, finish };
  }
}

interface Run {
  readonly budget: QueryBudget;
  readonly executor: Executor;
  readonly finish: (result: QueryResult) => QueryAnswer;
}

/** The schema config's budgets, each lowered where `lower` sets a smaller one. */
function lowered(limits: QueryLimits, lower: Partial<QueryLimits>): QueryLimits {
  return {
    timeoutMs: Math.min(limits.timeoutMs, lower.timeoutMs ?? Infinity),
    maxRows: Math.min(limits.maxRows, lower.maxRows ?? Infinity),
    maxResponseBytes: Math.min(limits.maxResponseBytes, lower.maxResponseBytes ?? Infinity),
  };
}
