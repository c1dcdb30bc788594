/**
 * The plan cache is bounded by the heap its plans hold (issue 26): each template is counted
 * above what it retains, measured as the heap left after GC over many templates of its kind,
 * so a flood of distinct shapes of any kind keeps the cache within `PLAN_CACHE_BYTES`.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  PLAN_CACHE_BYTES,
  PLAN_CACHE_MAX_ENTRY_BYTES,
  PLAN_TEXT_CACHE_BYTES,
  QueryEngine,
} from '../src/query-engine.ts';
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
        expect(engine.planCache.textBytes).toBeLessThanOrEqual(PLAN_TEXT_CACHE_BYTES);
      }
      const held = heapAfterGc() - before;
      expect(held, `${Math.round(held / 1024)} KiB held`).toBeLessThanOrEqual(
        PLAN_CACHE_BYTES + PLAN_TEXT_CACHE_BYTES,
      );
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
    expect(engine.planCache).toEqual({ bytes: 0, entries: 0, textBytes: 0, texts: 0 });
    engine.plan('c (id = 1) { id }');
    expect(engine.planCache).toMatchObject({ entries: 1, texts: 0 });
    engine.plan('c (id = 1) { id }');
    expect(engine.planCache).toMatchObject({ entries: 1, texts: 1 });
  });

  it('keeps the plan of a text asked twice, and none of texts asked once', () => {
    const engine = new QueryEngine(KINDS_SCHEMA);
    for (let i = 0; i < 10_000; i++) engine.plan(`c (id = ${i}) { id n }`);
    expect(engine.planCache).toMatchObject({ entries: 1, texts: 0 });
    const again = engine.plan('c (id = 9999) { id n }');
    expect(engine.planCache.texts).toBe(1);
    expect(engine.plan('c (id = 9999) { id n }')).toBe(again);
    expect(engine.plan('c (id = 9998) { id n }')).not.toBe(again);
  });

  // The text cache's entries share their template: what one holds beyond it is measured with
  // the template kept, and each is counted with its template again (it may outlive its entry).
  const shapes: Record<string, (i: number) => string> = {
    lookup: (i) => `c (id = ${i} AND v = '${'x'.repeat(i % 50)}') { id n v }`,
    '100 IN values and a relation': (i) =>
      `c (id IN (${Array.from({ length: 100 }, (_, k) => i + k).join(', ')}) AND v = '${i}') { id n v p { id name } }`,
  };
  it.each(Object.entries(shapes))(
    'counts a plan kept by its text above what it holds, and keeps a flood within budget: %s',
    (_shape, lookup) => {
      const engine = new QueryEngine(KINDS_SCHEMA);
      // A text's plan is kept when the text is asked a second time.
      const twice = (text: string) => engine.plan(text) && engine.plan(text);
      twice(lookup(0));
      const before = heapAfterGc();
      const kept = 50;
      for (let i = 1; i <= kept; i++) twice(lookup(i));
      const measured = (heapAfterGc() - before) / kept;
      const { textBytes, texts, bytes } = engine.planCache;
      expect(texts).toBe(kept + 1);
      expect(textBytes / texts - bytes).toBeGreaterThanOrEqual(measured);
      // Distinct values of one shape turn over the text cache, never the shapes' templates.
      engine.plan('p (id = 1) { id name }');
      const flood = Math.ceil(PLAN_TEXT_CACHE_BYTES / (textBytes / texts)) + kept;
      for (let i = 0; i < flood; i++) {
        twice(lookup(i));
        expect(engine.planCache.textBytes).toBeLessThanOrEqual(PLAN_TEXT_CACHE_BYTES);
      }
      expect(engine.planCache.texts).toBeLessThan(flood);
      expect(engine.planCache.entries).toBe(2);
    },
    30_000,
  );
});
