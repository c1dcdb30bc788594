/**
 * The plan cache is bounded by the heap its plans hold (issue 26): each template is counted
 * above what it retains, measured as the heap left after GC over many templates of its kind,
 * so a flood of distinct shapes of any kind keeps the cache within `PLAN_CACHE_BYTES`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { PLAN_CACHE_BYTES, PLAN_CACHE_MAX_ENTRY_BYTES, QueryEngine } from '../src/query-engine.ts';
import { KINDS_SCHEMA, measureTemplates, TEMPLATE_KINDS } from './template-kinds.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Templates measured per kind: enough that one allocation elsewhere is noise. */
const MEASURED = 60;
/** Distinct shapes per kind in a flood: each kind's alone is past the budget uncounted. */
const FLOOD = 200;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('plan cache memory', () => {
  it.each(Object.entries(TEMPLATE_KINDS))(
    'counts a template above what it holds: %s',
    (_kind, make) => {
      const { measured, counted } = measureTemplates(make, MEASURED, gc);
      expect(measured).toBeGreaterThan(0);
      expect(counted).toBeGreaterThanOrEqual(measured);
    },
  );

  it.each(Object.entries(TEMPLATE_KINDS))(
    'keeps a flood of distinct shapes within its budget: %s',
    (_kind, make) => {
      const before = heapAfterGc();
      const engine = new QueryEngine(KINDS_SCHEMA);
      for (let i = 0; i < FLOOD; i++) {
        engine.plan(make(i));
        expect(engine.planCache.bytes).toBeLessThanOrEqual(PLAN_CACHE_BYTES);
      }
      const held = heapAfterGc() - before;
      expect(held, `${Math.round(held / 1024)} KiB held`).toBeLessThanOrEqual(PLAN_CACHE_BYTES);
      // Keeps the engine alive through the measure.
      expect(engine.planCache.entries).toBeGreaterThanOrEqual(0);
    },
    30_000,
  );

  it('plans a query whose plan is over a 16th of the budget without keeping it', () => {
    const engine = new QueryEngine(KINDS_SCHEMA);
    const like = TEMPLATE_KINDS['256 LIKE patterns']!;
    const { counted } = measureTemplates(like, 1, gc);
    expect(counted).toBeGreaterThan(PLAN_CACHE_MAX_ENTRY_BYTES);
    expect(engine.plan(like(0)).table.name).toBe('c');
    expect(engine.planCache).toEqual({ bytes: 0, entries: 0 });
    engine.plan('c (id = 1) { id }');
    expect(engine.planCache.entries).toBe(1);
  });
});
