/**
 * Runs the two live-query phases of bench/lib/hostile-live.ts alone (no other hostile shapes):
 *
 *   node bench/hostile-live-check.ts [--seconds S]
 *
 * over the hostile fixture served as an `xs` instance, and prints each phase's figures and the
 * instance's peak RSS during it against its 512 MB.
 */
import { parseArgs } from 'node:util';
import { mariaDbAdmin, startTestServers } from '@replix/testkit';
import {
  createHostileDatabase,
  INSTANCE_MEMORY_MB,
  type ServeChild,
  startServeChild,
} from '../packages/instance/test/hostile-fixture.ts';
import { liveQueryFloodPhase, pausedLiveReadersPhase } from './lib/hostile-live.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '20' } } });
const seconds = Number(args.seconds);

/** Runs `phase` while sampling the child's RSS every 100 ms; the phase's result and the peak. */
async function measured<T>(child: ServeChild, phase: () => Promise<T>) {
  let peak = child.rssMb();
  const sampler = setInterval(() => {
    peak = Math.max(peak, child.rssMb() || 0);
  }, 100);
  try {
    return { result: await phase(), peakRssMb: Math.round(Math.max(peak, child.rssMb() || 0)) };
  } finally {
    clearInterval(sampler);
  }
}

const servers = await startTestServers();
let child: ServeChild | undefined;
try {
  const database = await createHostileDatabase(mariaDbAdmin(servers.mariadb.url));
  child = await startServeChild(database.url);
  const serving = child;
  console.log(`instance ready, RSS ${Math.round(serving.rssMb())} MB of ${INSTANCE_MEMORY_MB} MB`);
  const paused = await measured(serving, () => pausedLiveReadersPhase(serving, database, seconds));
  console.log('paused live readers:', {
    ...paused.result,
    peakRssMb: paused.peakRssMb,
    instanceMb: INSTANCE_MEMORY_MB,
  });
  const flood = await measured(serving, () => liveQueryFloodPhase(serving, database, seconds));
  const { delaysMs, ...figures } = flood.result;
  console.log('live-query flood:', {
    ...figures,
    delayP50Ms: Math.round(figures.delayP50Ms),
    delayP95Ms: Math.round(figures.delayP95Ms),
    delayMaxMs: Math.round(Math.max(...delaysMs)),
    peakRssMb: flood.peakRssMb,
    goal: 'delay p95 ≤ sync interval (1 s) + 500 ms, no update lost',
  });
  await database.drop();
} finally {
  await child?.stop();
  await servers.stop();
}
