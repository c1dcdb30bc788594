/**
 * `npm run bench:hostile`: does a cheap query keep its latency, and the instance its memory,
 * under hostile load (issues 12 and 26)? Over the hostile fixture (1,000,000 rows; see
 * packages/instance/test/hostile-fixture.ts) served by `replix serve` held to an `xs` instance
 * (512 MB):
 *
 *   node bench/hostile.ts [--seconds S] [--clients N] [--non-readers M] [--phases 1,3]
 *
 * Runs each phase in turn for S seconds (`bench/lib/hostile-phase.ts`): the baseline (no load),
 * issue 12's hostile shapes from N clients, and issue 26's: M clients that never read a ~12 MB
 * answer, 2,000 queries of distinct shapes, 40 paused readers of a large live query, and one
 * key's 60 expensive live queries beside another key's cheap one (`--phases`: only those).
 * During each, another key sends a primary-key lookup every 50 ms. Prints per phase the
 * lookup's p50/p95/p99, the instance's peak RSS against its size, the goals (p99 ≤ 100 ms with
 * every lookup right, peak RSS ≤ 512 MB, and the phase's own) and what the phase's clients saw.
 */
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers, type TestDatabase } from '@replix/testkit';
import {
  CHEAP_QUERY,
  createHostileDatabase,
  INSTANCE_MEMORY_MB,
  type ServeChild,
  startServeChild,
} from '../packages/instance/test/hostile-fixture.ts';
import {
  CHEAP_EVERY_MS,
  type HostilePhase,
  type PhaseResult,
  runPhase,
} from './lib/hostile-phase.ts';
import { baselinePhase } from './lib/hostile-phases/baseline-phase.ts';
import { hostileShapesPhase } from './lib/hostile-phases/hostile-shapes-phase.ts';
import { liveFloodPhase } from './lib/hostile-phases/live-flood-phase.ts';
import { nonReadersPhase } from './lib/hostile-phases/non-readers-phase.ts';
import { pausedLiveReadersPhase } from './lib/hostile-phases/paused-live-readers-phase.ts';
import { shapeFloodPhase } from './lib/hostile-phases/shape-flood-phase.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    clients: { type: 'string', default: '3' },
    'non-readers': { type: 'string', default: '32' },
    phases: { type: 'string' },
  },
});
const seconds = Number(args.seconds);

/** The phases, in the order they run: a new kind of hostile load is one more line. */
function phases(source: TestDatabase): readonly HostilePhase[] {
  const all = [
    baselinePhase(),
    hostileShapesPhase(Number(args.clients)),
    nonReadersPhase(Number(args['non-readers'])),
    shapeFloodPhase(),
    pausedLiveReadersPhase(source),
    liveFloodPhase(source),
  ];
  if (!args.phases) return all;
  const picked = new Set(args.phases.split(',').map(Number));
  return all.filter((_, index) => picked.has(index + 1));
}

const log = (message: string) => process.stderr.write(`${message}\n`);

const servers = await startTestServers();
let child: ServeChild | undefined;
try {
  log('fixture: p 1,000 rows, c 1,000,000 rows, pay 25,000 rows → s with 36 KB pictures…');
  const database = await createHostileDatabase(mariaDbAdmin(servers.mariadb.url));
  log('starting replix serve (heap bounded to an xs instance)…');
  child = await startServeChild(database.url);
  await runPhase(child, baselinePhase(), 1); // warm-up

  const results: PhaseResult[] = [];
  for (const phase of phases(database)) {
    if (!child.alive()) break;
    log(`phase: ${phase.name}, ${seconds} s…`);
    results.push(await runPhase(child, phase, seconds));
  }

  printTable(
    `Cheap query (${CHEAP_QUERY}, another key) every ${CHEAP_EVERY_MS} ms, ${seconds} s per phase; instance of ${INSTANCE_MEMORY_MB} MB`,
    results.map((result) => ({
      phase: result.name,
      load_1m: result.load1m,
      answered: result.answered,
      wrong: result.wrong,
      p50_ms: result.p50Ms,
      p95_ms: result.p95Ms,
      p99_ms: result.p99Ms,
      peak_rss_mb: result.peakRssMb,
      alive: result.alive ? 'yes' : 'no',
    })),
  );
  printTable(
    'Goals',
    results.flatMap((result) =>
      result.goals.map((goal) => ({
        phase: result.name,
        measure: goal.measure,
        value: goal.value,
        goal: goal.goal,
        met: goal.met ? 'yes' : 'no',
      })),
    ),
  );
  printTable(
    "What each phase's clients saw",
    results.flatMap((result) =>
      Object.entries(result.report.outcomes)
        .sort((a, b) => b[1] - a[1])
        .map(([answer, count]) => ({ phase: result.name, answer, count })),
    ),
  );
  await database.drop();
} finally {
  await child?.stop();
  await servers.stop();
}
