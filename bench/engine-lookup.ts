/**
 * Engine microseconds of issue 27's two fast paths on an in-memory generation of the bench
 * dataset (bench/lib/memory-dataset.ts): the PK lookup `fact (id = N) { id qty amount }` and the
 * embed `dim (id = N) { * fact { * } }` (a parent and its ~10 children), every query a new text
 * (decoded from bytes as a request body is) of an id drawn at random: from the whole table (rows
 * scattered over it miss the CPU caches) or from bench:engine's 200 (`-hot`: they stay cached). Per scenario: `plan` + `answer` as a
 * server calls them (CPU µs per query, and the `meta.timing_ms` the answers report), and the
 * parts alone: `queryShape`, `plan` on a warm cache, `answer` on a ready plan. With `--profile`,
 * a CPU profile of the timed loops, the functions with the most self time.
 *
 *   npm run bench:lookup [-- --fact-rows N --dim-rows N --batch 2000 --batches 15 --profile]
 *
 * Each figure is CPU time, the least over batches of the batch's mean, but `meta.timing_ms`
 * (wall clock, as the answers report it: its median over every query).
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { QueryEngine, type QueryPlan } from '@replix/engine';
import { queryShape } from '@replix/query';
import { mulberry32 } from '@replix/testkit/mulberry32';
import { benchGeneration, benchRows } from './lib/memory-dataset.ts';
import { type CpuProfile, topFunctions } from './lib/profile-breakdown.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    'fact-rows': { type: 'string', default: '1000000' },
    'dim-rows': { type: 'string', default: '100000' },
    batch: { type: 'string', default: '2000' },
    batches: { type: 'string', default: '15' },
    profile: { type: 'boolean', default: false },
    only: { type: 'string', default: 'lookup,embed,lookup-hot,embed-hot' },
  },
});
const factRows = Number(args['fact-rows']);
const dimRows = Number(args['dim-rows']);
const batch = Number(args.batch);
const batches = Number(args.batches);
const log = (message: string) => process.stderr.write(`${message}\n`);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

log(`generating ${factRows} fact rows, ${dimRows} dim rows…`);
const generation = benchGeneration(benchRows(factRows, dimRows));
const engine = new QueryEngine(generation.schema);
const meta = { swapCount: 3, ageMs: 12.4, version: 'bench' };

interface Scenario {
  readonly name: string;
  /** The query text for an id. */
  readonly text: (id: number) => string;
  /** The ids drawn from at random. */
  readonly ids: (index: number) => number;
  readonly idCount: number;
}

/** bench:engine's 200 ids (bench/engine.ts), whose rows stay in the CPU caches. */
const hotIds = Array.from({ length: 200 }, (_, i) => 1 + ((i * 4999) % factRows));
const lookup = (id: number) => `fact (id = ${id}) { id qty amount }`;
const embed = (id: number) => `dim (id = ${id}) { * fact { * } }`;
const allScenarios: Scenario[] = [
  { name: 'lookup', text: lookup, ids: (i) => i + 1, idCount: factRows },
  { name: 'embed', text: embed, ids: (i) => i + 1, idCount: dimRows },
  { name: 'lookup-hot', text: lookup, ids: (i) => hotIds[i] as number, idCount: hotIds.length },
  {
    name: 'embed-hot',
    text: embed,
    ids: (i) => 1 + ((hotIds[i] as number) % dimRows),
    idCount: hotIds.length,
  },
];
const scenarios = allScenarios.filter((scenario) => args.only.split(',').includes(scenario.name));

/** `count` texts of random ids, flat strings decoded from bytes as a request body is. */
function texts(scenario: Scenario, count: number, seed: number): string[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const text = scenario.text(scenario.ids(Math.floor(random() * scenario.idCount)));
    return Buffer.from(text, 'utf8').toString('utf8');
  });
}

/**
 * CPU µs per call of `run` over each batch's texts (this process's CPU time: neighbours on a
 * shared machine weigh less than on the wall clock): the least of the batches' means.
 */
async function timed(pool: readonly string[][], run: (text: string) => unknown): Promise<number> {
  const means: number[] = [];
  for (const batchTexts of pool) {
    const started = process.cpuUsage();
    for (const text of batchTexts) {
      const result = run(text);
      if (result instanceof Promise) await result;
    }
    const used = process.cpuUsage(started);
    means.push((used.user + used.system) / batchTexts.length);
  }
  return Math.min(...means);
}

/** Median `meta.timing_ms` (in µs) of the answers over the pool, as a server runs them. */
async function reportedTiming(pool: readonly string[][]): Promise<number> {
  const timings: number[] = [];
  for (const batchTexts of pool) {
    for (const text of batchTexts) {
      const started = performance.now();
      const plan = engine.plan(text);
      const planMs = performance.now() - started;
      const answer = await engine.answer(generation, plan, meta, { planMs, startedAt: started });
      timings.push(answer.timingMs * 1000);
    }
  }
  return median(timings);
}

async function serverPath(text: string): Promise<unknown> {
  const started = performance.now();
  const plan = engine.plan(text);
  const planMs = performance.now() - started;
  return engine.answer(generation, plan, meta, { planMs, startedAt: started });
}

const rows: Record<string, string | number>[] = [];
const profiles: { name: string; profile: CpuProfile }[] = [];
for (const scenario of scenarios) {
  log(`timing ${scenario.name}…`);
  const pool = Array.from({ length: batches }, (_, b) => texts(scenario, batch, 1000 + b));
  const example = pool[0]?.[0] as string;
  // Warm: every path compiled and the plan cached, as on a server that has run for a while.
  for (let round = 0; round < 3; round++) {
    for (const text of pool[round % pool.length] as string[]) {
      engine.execute(generation, text, meta);
      await serverPath(text);
    }
  }
  const plans = pool.map((texts) => texts.map((text) => engine.plan(text)));
  const planOf = new Map<string, QueryPlan>();
  pool.forEach((texts, b) => {
    texts.forEach((text, i) => {
      planOf.set(text, plans[b]?.[i] as QueryPlan);
    });
  });
  const shapeUs = await timed(pool, (text) => queryShape(text));
  const planUs = await timed(pool, (text) => engine.plan(text));
  const answerUs = await timed(pool, (text) =>
    engine.answer(generation, planOf.get(text) as QueryPlan, meta),
  );
  const serverUs = await timed(pool, serverPath);
  const executeUs = await timed(pool, (text) => engine.execute(generation, text, meta));
  const timingUs = await reportedTiming(pool);
  rows.push({
    query: example.replace(/\d+/, 'N'),
    ids: scenario.name.endsWith('hot') ? "bench:engine's 200" : 'random',
    'shape µs': shapeUs,
    'plan µs': planUs,
    'answer µs': answerUs,
    'plan+answer µs': serverUs,
    'execute µs': executeUs,
    'meta.timing_ms µs': timingUs,
  });
  if (args.profile) {
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
    for (let round = 0; round < 3; round++) await timed(pool, serverPath);
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    session.disconnect();
    profiles.push({ name: scenario.name, profile });
  }
}

printTable(
  `engine µs per query (${factRows} fact rows; CPU µs: least of ${batches} batches of ${batch} random ids)`,
  rows,
);
/** Frames of the profiler itself (its session's calls) and the idle loop, not the queries'. */
const NOT_QUERIES = /^(post node:inspector|\(idle\)|\(program\)|cpuUsage |timed bench)/;
for (const { name, profile } of profiles) {
  const all = topFunctions(profile, 1_000_000).filter((f) => !NOT_QUERIES.test(f.name));
  const total = all.reduce((sum, f) => sum + f.ms, 0);
  printTable(
    `${name}: the functions with the most self time (of ${total.toFixed(0)} ms in the queries)`,
    all.slice(0, 22).map((f) => ({
      function: f.name,
      ms: f.ms.toFixed(1),
      share: `${((f.ms / total) * 100).toFixed(1)}%`,
    })),
  );
}
