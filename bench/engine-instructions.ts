/**
 * Instructions per query of issue 27's two fast paths (the PK lookup and the embed of a parent
 * and its ~10 children, bench:engine's 200 ids, plan + answer as a server calls them), counted by
 * valgrind's callgrind: a figure this machine's drifting speed cannot move, for telling apart
 * changes of a few percent that timed benches (bench:lookup, bench:http) cannot. Node runs with
 * `--single-threaded --predictable` (no concurrent compilation or GC, whose timing otherwise
 * moves a run's count by hundreds of millions), and each query's count is the difference of two
 * runs, `--queries` and five times as many, so start-up and warm-up cancel out. With `--before`,
 * another checkout is counted the same way and the ratios printed.
 *
 *   npm run bench:instructions [-- --before <other checkout> --queries 5000]
 *
 * Needs valgrind (Debian's package). Instructions are not time (a cache miss costs hundreds of
 * them), so the timed benches stay the measure of the goals; this one shows where work went.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    queries: { type: 'string', default: '5000' },
    // Internal: the child's side, run under valgrind on a checkout's engine.
    child: { type: 'string' },
    count: { type: 'string' },
    checkout: { type: 'string' },
  },
});

const SCENARIOS = {
  lookup: (i: number) => `fact (id = ${1 + ((i * 4999) % 20_000)}) { id qty amount }`,
  embed: (i: number) => `dim (id = ${1 + ((((i * 4999) % 20_000) + 1) % 2000)}) { * fact { * } }`,
} as const;
type Scenario = keyof typeof SCENARIOS;

if (args.child) await runChild(args.child as Scenario, Number(args.count), String(args.checkout));
else await main();

/**
 * Under valgrind: warms up, then plans and answers `count` queries of the scenario, with the
 * engine and bench dataset of `checkout` (so an older checkout needs no copy of this file).
 */
async function runChild(scenario: Scenario, count: number, checkout: string): Promise<void> {
  const { QueryEngine } = (await import(
    join(checkout, 'packages/engine/src/index.ts')
  )) as typeof import('@replix/engine');
  const { benchGeneration, benchRows } = (await import(
    join(checkout, 'bench/lib/memory-dataset.ts')
  )) as typeof import('./lib/memory-dataset.ts');
  const generation = benchGeneration(benchRows(20_000, 2000));
  const engine = new QueryEngine(generation.schema);
  const meta = { version: 'bench', swapCount: 0, ageMs: 0 };
  const texts = Array.from({ length: 200 }, (_, i) => SCENARIOS[scenario](i));
  const ask = (i: number) => {
    // A new string per query, as a request's text is.
    const text = Buffer.from(texts[i % texts.length] as string).toString();
    const answer = engine.answer(generation, engine.plan(text), meta);
    if (answer instanceof Promise) throw new Error('a query of this bench paused');
    return answer.bytes;
  };
  let bytes = 0;
  for (let i = 0; i < 20_000; i++) bytes += ask(i);
  for (let i = 0; i < count; i++) bytes += ask(i);
  process.stdout.write(`${bytes}\n`);
}

/** The main thread's instructions of one child run. */
function instructions(checkout: string, scenario: Scenario, count: number, folder: string): number {
  const out = join(folder, `callgrind.${scenario}.${count}.${Math.random().toString(36).slice(2)}`);
  const script = fileURLToPath(import.meta.url);
  execFileSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${out}`,
      process.execPath,
      '--single-threaded',
      '--predictable',
      script,
      '--child',
      scenario,
      '--count',
      String(count),
      '--checkout',
      checkout,
    ],
    { cwd: checkout, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const summary = /^summary: (\d+)$/m.exec(readFileSync(out, 'utf8'));
  if (!summary) throw new Error(`no summary in ${out}`);
  return Number(summary[1]);
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).error) {
    throw new Error('bench:instructions needs valgrind (apt-get install valgrind)');
  }
  const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const checkouts: Array<[string, string]> = [['this checkout', here]];
  if (args.before) checkouts.push([`before: ${args.before}`, resolve(args.before)]);
  const queries = Number(args.queries);
  const folder = mkdtempSync(join(tmpdir(), 'replix-instructions-'));
  try {
    const rows: Record<string, string | number>[] = [];
    for (const scenario of Object.keys(SCENARIOS) as Scenario[]) {
      const counts = checkouts.map(([name, checkout]) => {
        process.stderr.write(`counting ${scenario} in ${name}…\n`);
        const few = instructions(checkout, scenario, queries, folder);
        const many = instructions(checkout, scenario, 5 * queries, folder);
        return (many - few) / (4 * queries);
      });
      const ours = counts[0] as number;
      checkouts.forEach(([name], i) => {
        const each = counts[i] as number;
        rows.push({
          query: SCENARIOS[scenario](0).replace(/\d+/, 'N'),
          checkout: name,
          'instructions per query': Math.round(each),
          ...(i > 0 ? { 'this ÷ before': (ours / each).toFixed(2) } : {}),
        });
      });
    }
    printTable(
      `Main-thread instructions per query, plan + answer (callgrind; ${queries} vs ${5 * queries} queries after 20,000 to warm up; node --single-threaded --predictable)`,
      rows,
    );
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
