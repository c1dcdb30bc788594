import { parseQuery, QueryParseError, QueryTooComplexError } from '@replix/query';
import { EngineError } from './errors.ts';
import { Executor } from './exec/execute.ts';
import type { QueryPlan } from './exec/plan.ts';
import { validateQuery } from './exec/validate.ts';
import type { CompiledSchema } from './schema/compiled-schema.ts';
import type { Generation } from './storage/generation.ts';

/** What identifies the snapshot a response was served from (`meta.snapshot`, `meta.version`). */
export interface ResponseMeta {
  readonly version: string;
  readonly swapCount: number;
  readonly ageMs: number;
}

/** The spec's default LIMIT for queries without one. */
export const DEFAULT_LIMIT = 1000;
const PLAN_CACHE_SIZE = 2000;

/**
 * Parses, validates and runs queries against generations of one compiled schema, writing the
 * spec's success envelope as JSON text. Plans depend only on the schema, so they are cached by
 * query text: a repeated query skips parsing and validation.
 */
export class QueryEngine {
  readonly schema: CompiledSchema;
  readonly #plans = new Map<string, QueryPlan>();

  constructor(schema: CompiledSchema) {
    this.schema = schema;
  }

  /** Throws `EngineError` (parse errors included, as code `parse_error`). */
  plan(text: string): QueryPlan {
    const cached = this.#plans.get(text);
    if (cached) return cached;
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
    const plan = validateQuery(this.schema, query, {
      defaultLimit: DEFAULT_LIMIT,
      nestedDefaultLimit: this.schema.config.query.nested_default_limit,
    });
    if (this.#plans.size >= PLAN_CACHE_SIZE) {
      const oldest = this.#plans.keys().next().value;
      if (oldest !== undefined) this.#plans.delete(oldest);
    }
    this.#plans.set(text, plan);
    return plan;
  }

  /** Runs `text` against `generation` and returns the whole response body. */
  execute(generation: Generation, text: string, meta: ResponseMeta): string {
    const started = performance.now();
    const plan = this.plan(text);
    const result = new Executor(generation).run(plan);
    const pagination = {
      count: result.count,
      total_matched: result.totalMatched,
      has_more: result.hasMore,
      limit: result.limit,
      ...(result.nextCursor !== undefined ? { next_cursor: result.nextCursor } : {}),
    };
    const timingMs = Math.round((performance.now() - started) * 1000) / 1000;
    return (
      `{"data":${result.data},"meta":{"table":${JSON.stringify(plan.table.name)},` +
      `"query":${JSON.stringify(plan.echo)},"pagination":${JSON.stringify(pagination)},` +
      `"timing_ms":${timingMs},"snapshot":{"swap_count":${meta.swapCount},"age_ms":${Math.round(meta.ageMs)}},` +
      `"version":${JSON.stringify(meta.version)}}}`
    );
  }
}
