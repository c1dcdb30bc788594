/**
 * `npm run bench:checkpoint`: checkpoints (docs/replication.md, "Checkpoints") on a real
 * PostgreSQL with logical replication, one table of 1,000,000 rows of an order-like shape.
 *
 *   node --expose-gc bench/checkpoint.ts [--rows N] [--rounds R] [--seconds S]
 *     [--alternations A] [--clients C] [--writes W]
 *
 * Defaults: 1,000,000 rows, R = 3, S = 8, A = 3, C = 4, W = 5; about 2 minutes on 2 cores.
 *
 * 1. Start from the source vs from a checkpoint: `startInstance(…)` until it resolves (it then
 *    serves), R times each in turn, a fresh instance every time. The source start has an empty
 *    checkpoint folder; the checkpoint start the folder that source start left (its checkpoint
 *    written right after the read). Goal: checkpoint ≤ 0.25× source. Each checkpoint start is
 *    checked to be one (`controller.origin`), and both answer a count and sums as PostgreSQL does.
 * 2. Writing one flat out (as before a planned stop): `writeCheckpoint` of the served
 *    generation W times (median ms), against a
 *    plain write of the same bytes (one write per buffer, then fsync) in the same run, and
 *    the bytes on disk against the snapshot's in memory (`controller.bytesOf`).
 * 3. Query p50/p99 while checkpoints are written back to back on the main thread (`threads: 1`,
 *    the hard case) vs nothing: C keep-alive clients in a closed loop on a thread of this
 *    process (lib/query-mix-worker.ts), a point lookup and a small filtered, ordered query in
 *    turn, for S-second windows, the conditions taking turns A times. The checkpoints are
 *    paced as the instance paces them while it serves (`CHECKPOINT_WRITE_BYTES_PER_SECOND`). A
 *    third condition writes
 *    the same bytes a megabyte at a time as `writeCheckpoint` does but without hashing, to tell
 *    the hashing on the main thread from the I/O. Goal: p99 with checkpoints ≤ 1.2× without.
 *
 * Timings are printed, never asserted. The checkpoint files are read back from the page cache
 * (they were just written): a start after a reboot would read them from disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { encodeGeneration, exportGeneration, parseSchemaConfig } from '@replix/engine';
import { type InstanceConfig, type RunningInstance, startInstance } from '@replix/instance';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { serviceLogger } from '@replix/runtime/logger';
import { type DatabaseServer, postgresAdmin, startDedicatedServer } from '@replix/testkit';
import {
  pruneCheckpoints,
  writeCheckpoint,
} from '../packages/instance/src/snapshot/checkpoint-files.ts';
import { CHECKPOINT_WRITE_BYTES_PER_SECOND } from '../packages/instance/src/snapshot/checkpoint-schedule.ts';
import { median } from './lib/median.ts';
import { percentile } from './lib/percentile.ts';
import type { QueryMixJob, QueryMixWindow } from './lib/query-mix-worker.ts';
import { printTable } from './lib/report.ts';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    alternations: { type: 'string', default: '3' },
    clients: { type: 'string', default: '4' },
    writes: { type: 'string', default: '5' },
  },
});
const rows = Number(args.rows);
const rounds = Number(args.rounds);
const windowMs = Number(args.seconds) * 1000;
const alternations = Number(args.alternations);
const clients = Number(args.clients);
const writes = Number(args.writes);
const TABLE = 'orders';
const START_GOAL = 0.25;
const P99_GOAL = 1.2;
/** `writeCheckpoint`'s step (checkpoint-files.ts `SLICE_BYTES`). */
const SLICE_BYTES = 1024 * 1024;

const gc = (globalThis as { gc?: () => void }).gc;
const log = (message: string) => process.stderr.write(`${message}\n`);
const fmt = (n: number, digits = 0) => n.toFixed(digits);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);
const collect = () => {
  gc?.();
  gc?.();
};

// Everything made here goes, even when a step throws or the run is interrupted.
const folders: string[] = [];
const folder = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `replix-bench-checkpoint-${name}-`));
  folders.push(dir);
  return dir;
};
let server: DatabaseServer | undefined;
const removeFolders = () => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
};
const onExit = () => {
  server?.killNow();
  removeFolders();
};
const onSignal = (signal: NodeJS.Signals) => {
  onExit();
  process.kill(process.pid, signal);
};
process.once('exit', onExit);
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

/** The bytes of every file under `dir` (a checkpoint folder: its three files). */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

interface Timed {
  readonly at: number;
  readonly line: Record<string, unknown>;
}

/** A started instance with its keys, and its log lines with the time each was written. */
interface Bench {
  readonly running: RunningInstance;
  readonly apiKey: string;
  readonly adminKey: string;
  readonly lines: Timed[];
  readonly startMs: number;
  readonly calledAt: number;
}

async function start(
  sourceUrl: string,
  dir: string,
  level: 'info' | 'warn' = 'info',
): Promise<Bench> {
  const keySecret = newKeySecret();
  const keyId = newKeyId();
  const adminKeyId = newKeyId();
  const lines: Timed[] = [];
  const logger = serviceLogger('replix-instance', level, {
    write(text: string) {
      const at = performance.now();
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push({ at, line });
      if (Number(line.level) >= 40) log(`instance: ${text.trimEnd()}`);
    },
  });
  const config: InstanceConfig = {
    sourceUrl,
    schemaConfig: parseSchemaConfig({
      tables: [{ name: TABLE }],
      sync: { mode: 'cdc', interval: 0.1 },
    }),
    host: '127.0.0.1',
    port: 0,
    keySecret,
    keyIds: [keyId],
    adminKeyIds: [adminKeyId],
    generatedKey: false,
    buildHash: 'benchbuild00',
    logLevel: level,
    threads: 1,
    // Only the write after a source read: the schedule stays out of the measured windows.
    checkpoints: { dir, schedule: { intervalMs: 3_600_000, changes: 1_000_000_000 } },
  };
  collect();
  const calledAt = performance.now();
  const running = await startInstance(config, logger);
  const startMs = performance.now() - calledAt;
  return {
    running,
    apiKey: deriveApiKey(keySecret, keyId),
    adminKey: deriveApiKey(keySecret, adminKeyId),
    lines,
    startMs,
    calledAt,
  };
}

async function queryJson(bench: Bench, text: string): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${bench.running.url}/query`, {
    method: 'POST',
    body: text,
    headers: { Authorization: `Bearer ${bench.apiKey}` },
  });
  const body = (await response.json()) as { data?: Record<string, unknown>[] };
  if (response.status !== 200 || !body.data) {
    throw new Error(`query failed ${response.status}: ${JSON.stringify(body)}`);
  }
  return body.data;
}

// biome-ignore lint/suspicious/noExplicitAny: /health/detail is read as loose JSON
async function detail(bench: Bench): Promise<any> {
  const response = await fetch(`${bench.running.url}/health/detail`, {
    headers: { Authorization: `Bearer ${bench.adminKey}` },
  });
  return response.json();
}

/** Waits for the checkpoint the instance writes right after a source read; its `last`. */
async function firstCheckpoint(bench: Bench): Promise<{ write_ms: number; name: string }> {
  const deadline = performance.now() + 120_000;
  for (;;) {
    const checkpoints = (await detail(bench)).snapshot?.checkpoints;
    if (checkpoints?.written >= 1 && !checkpoints.writing) return checkpoints.last;
    if (checkpoints?.last_error) throw new Error(`checkpoint failed: ${checkpoints.last_error}`);
    if (performance.now() > deadline) throw new Error('no checkpoint after the source read');
    await sleep(100);
  }
}

interface StartTimes {
  /** `startInstance` called until it resolved. */
  readonly startMs: number;
  /** Before the snapshot load began: introspection, the replication check, the HTTP server. */
  readonly before: number;
  /** `controller.start`: the source read, or the checkpoint read, checked and decoded. */
  readonly load: number;
  /** Of `load`, finding, reading, checking and decoding the checkpoint (NaN for a source start). */
  readonly read: number;
  /** After the load until `startInstance` resolved. */
  readonly after: number;
}

/** Where a start's time went, from the time its log lines were written. */
function startTimes(bench: Bench): StartTimes {
  const loaded = bench.lines.find((timed) => timed.line.msg === 'snapshot loaded');
  const fromCheckpoint = bench.lines.find(
    (timed) => timed.line.msg === 'starting from a checkpoint',
  );
  const { startMs } = bench;
  if (!loaded)
    return { startMs, before: Number.NaN, load: Number.NaN, read: Number.NaN, after: Number.NaN };
  const loadMs = Number(loaded.line.ms);
  const loadedAt = loaded.at - bench.calledAt;
  return {
    startMs,
    before: loadedAt - loadMs,
    load: loadMs,
    read: fromCheckpoint ? Number(fromCheckpoint.line.ms) : Number.NaN,
    after: startMs - loadedAt,
  };
}

type Condition = 'none' | 'plain' | 'checkpoint';
const CONDITIONS: readonly Condition[] = ['none', 'plain', 'checkpoint'];
const CONDITION_LABELS: Record<Condition, string> = {
  none: 'nothing',
  plain: 'the same bytes written 1 MB at a time, no hashing',
  checkpoint: 'checkpoints written back to back, paced',
};

interface Measured {
  readonly window: QueryMixWindow;
  readonly passes: number;
  readonly passMs: number;
  /** The main thread's event loop utilisation over the window. */
  readonly busy: number;
  readonly delayP99: number;
  readonly delayMax: number;
}

/** As `writeCheckpoint` writes buffers.bin, a megabyte per awaited write, but with no hashing. */
async function writeInSlices(path: string, buffers: readonly Uint8Array[]): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (const bytes of buffers) {
      for (let at = 0; at < bytes.byteLength; at += SLICE_BYTES) {
        await file.write(bytes.subarray(at, Math.min(at + SLICE_BYTES, bytes.byteLength)));
      }
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

const ANSWER_QUERY = `${TABLE} { COUNT(*) SUM(amount) SUM(quantity) }`;

try {
  log('starting PostgreSQL…');
  server = await startDedicatedServer('postgres');
  log(`dataset: ${rows} rows…`);
  const loadStarted = performance.now();
  const database = await postgresAdmin(server.url).createDatabase(`
    CREATE TABLE ${TABLE} (
      id BIGINT PRIMARY KEY,
      customer_id INT NOT NULL,
      quantity INT NOT NULL,
      status_code SMALLINT NOT NULL,
      sku VARCHAR(40) NOT NULL,
      amount NUMERIC(12,2) NOT NULL,
      created_at TIMESTAMP(3) NOT NULL,
      shipped BOOLEAN NOT NULL
    );
    INSERT INTO ${TABLE}
      SELECT i, 1 + (i * 7919) % 50000, 1 + (i * 31) % 20, (i * 13) % 6,
        'sku-' || lpad(((i * 104729) % 100000)::text, 6, '0') || CASE WHEN i % 4 = 0 THEN '-xl' ELSE '' END,
        ((i * 7919) % 10000000) / 100.0,
        TIMESTAMP '2023-01-01' + i * INTERVAL '17 seconds' + (i % 1000) * INTERVAL '1 millisecond',
        i % 3 <> 0
      FROM generate_series(1::BIGINT, ${rows}) AS i;
    ANALYZE;
  `);
  log(`dataset loaded in ${fmt(performance.now() - loadStarted)} ms`);
  const [expected] = await database.query<{ count: string; amount: string; quantity: string }>(
    `SELECT count(*) AS count, sum(amount) AS amount, sum(quantity) AS quantity FROM ${TABLE}`,
  );

  // 1. Source start, then a start from the checkpoint it wrote, R times in turn.
  // Numbers only: a Bench kept would keep its instance's snapshot alive into the next start.
  const sourceStarts: StartTimes[] = [];
  const checkpointStarts: StartTimes[] = [];
  const answers: { origin: string; data: string }[] = [];
  const postReadWrites: number[] = [];
  let checkpointDir = '';
  for (let round = 0; round < rounds; round++) {
    const dir = folder(`start${round}`);
    const fromSource = await start(database.url, dir);
    try {
      log(
        `round ${round + 1}: source start ${fmt(fromSource.startMs)} ms (origin ${fromSource.running.controller.origin})`,
      );
      answers.push({
        origin: String(fromSource.running.controller.origin),
        data: JSON.stringify(await queryJson(fromSource, ANSWER_QUERY)),
      });
      postReadWrites.push((await firstCheckpoint(fromSource)).write_ms);
    } finally {
      await fromSource.running.close();
    }
    sourceStarts.push(startTimes(fromSource));
    const fromCheckpoint = await start(database.url, dir);
    try {
      const origin = fromCheckpoint.running.controller.origin;
      const reported = (await detail(fromCheckpoint)).snapshot?.origin;
      log(
        `round ${round + 1}: checkpoint start ${fmt(fromCheckpoint.startMs)} ms (origin ${origin}, /health/detail ${reported})`,
      );
      if (origin !== 'checkpoint' || reported !== 'checkpoint') {
        throw new Error(`the start from ${dir} read the source (origin ${origin}, ${reported})`);
      }
      answers.push({
        origin: String(origin),
        data: JSON.stringify(await queryJson(fromCheckpoint, ANSWER_QUERY)),
      });
    } finally {
      await fromCheckpoint.running.close();
    }
    checkpointStarts.push(startTimes(fromCheckpoint));
    checkpointDir = dir;
  }
  const sameAnswer = answers.every((answer) => answer.data === answers[0]?.data);
  const answer = JSON.parse(answers[0]?.data ?? '[]')[0] as Record<string, unknown> | undefined;
  const values = Object.values(answer ?? {}).map(String);
  const matchesSource =
    values.length === 3 &&
    Number(values[0]) === Number(expected?.count) &&
    Number(values[1]) === Number(expected?.amount) &&
    Number(values[2]) === Number(expected?.quantity);
  const sourceMs = median(sourceStarts.map((b) => b.startMs));
  const checkpointMs = median(checkpointStarts.map((b) => b.startMs));
  const startRatio = median(checkpointStarts.map((b, i) => b.startMs / sourceStarts[i]!.startMs));
  const phases = (each: StartTimes[]) => {
    return {
      before: median(each.map((p) => p.before)),
      load: median(each.map((p) => p.load)),
      read: median(each.map((p) => p.read)),
      after: median(each.map((p) => p.after)),
    };
  };
  const sourcePhases = phases(sourceStarts);
  const checkpointPhases = phases(checkpointStarts);
  printTable(
    `1. Start until serving, median of ${rounds} (${rows} rows; ratio: the median of each round's)`,
    [
      {
        start: 'from the source (empty checkpoint folder)',
        ms: fmt(sourceMs),
        ratio: '',
        'before load ms': fmt(sourcePhases.before),
        'load ms': fmt(sourcePhases.load),
        'of it, checkpoint read ms': '-',
        'after load ms': fmt(sourcePhases.after),
      },
      {
        start: `from a checkpoint (goal ≤ ${START_GOAL}× source)`,
        ms: fmt(checkpointMs),
        ratio: fmt(startRatio, 3),
        'before load ms': fmt(checkpointPhases.before),
        'load ms': fmt(checkpointPhases.load),
        'of it, checkpoint read ms': fmt(checkpointPhases.read),
        'after load ms': fmt(checkpointPhases.after),
      },
    ],
  );
  printTable('Same answer from both', [
    {
      from: 'PostgreSQL',
      answer: `${expected?.count} | ${expected?.amount} | ${expected?.quantity}`,
    },
    ...answers.slice(0, 2).map((a) => ({ from: `instance (${a.origin})`, answer: a.data })),
    {
      from: 'all instance answers equal, and equal to PostgreSQL',
      answer: sameAnswer && matchesSource ? 'yes' : 'NO',
    },
  ]);

  // 2 and 3 on one more instance, started from the last checkpoint (fast) and left serving.
  log('starting the instance for the write and query measurements…');
  const served = await start(database.url, checkpointDir, 'warn');
  try {
    const { controller } = served.running;
    const current = controller.servedAt();
    if (!current) throw new Error('the instance serves nothing');
    const generation = current.generation;
    const position = current.position?.serialize() ?? null;
    const snapshotBytes = controller.bytesOf(generation);
    const reportedBytes = Number((await detail(served)).snapshot?.bytes);
    const of = { fingerprint: 'bench', position };

    // 2. Write time and size, against a plain write of the same bytes.
    const writeDir = folder('writes');
    const writeMs: number[] = [];
    const plainMs: number[] = [];
    let diskBytes = 0;
    const { buffers } = encodeGeneration(exportGeneration(generation));
    const bufferBytes = buffers.reduce((sum, b) => sum + b.byteLength, 0);
    for (let i = 0; i < writes; i++) {
      collect();
      let started = performance.now();
      const name = await writeCheckpoint(writeDir, exportGeneration(generation), of);
      writeMs.push(performance.now() - started);
      diskBytes = await bytesUnder(join(writeDir, name));
      await pruneCheckpoints(writeDir, 0);
      // Baseline: the same buffers, each in one writeFile, then one fsync; no hashing.
      const plain = join(writeDir, `plain-${i}`);
      await mkdir(plain);
      started = performance.now();
      const file = await open(join(plain, 'buffers.bin'), 'w');
      try {
        for (const bytes of buffers) await file.write(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      plainMs.push(performance.now() - started);
      await rm(plain, { recursive: true, force: true });
    }
    printTable(`2. Writing a checkpoint of the served generation, median of ${writes}`, [
      {
        measure: 'plain write of the same bytes + fsync (baseline), ms',
        value: fmt(median(plainMs)),
        ratio: '',
      },
      {
        measure: 'writeCheckpoint, ms',
        value: fmt(median(writeMs)),
        ratio: fmt(median(writeMs) / median(plainMs), 2),
      },
      {
        measure: 'the write right after a source read (/health/detail write_ms), ms',
        value: fmt(median(postReadWrites)),
        ratio: fmt(median(postReadWrites) / median(plainMs), 2),
      },
      {
        measure: 'snapshot in memory (controller.bytesOf), MB',
        value: mb(snapshotBytes),
        ratio: '',
      },
      {
        measure: 'snapshot in memory (/health/detail snapshot.bytes), MB',
        value: mb(reportedBytes),
        ratio: fmt(reportedBytes / snapshotBytes, 3),
      },
      {
        measure: 'buffers of the encoded generation, MB',
        value: mb(bufferBytes),
        ratio: fmt(bufferBytes / snapshotBytes, 3),
      },
      {
        measure: 'checkpoint on disk (its files), MB',
        value: mb(diskBytes),
        ratio: fmt(diskBytes / snapshotBytes, 3),
      },
      {
        measure: 'write throughput, MB/s',
        value: fmt(diskBytes / 1024 / 1024 / (median(writeMs) / 1000)),
        ratio: '',
      },
    ]);

    // 3. Query latency with and without checkpoints written back to back.
    const job: QueryMixJob = {
      url: served.running.url,
      apiKey: served.apiKey,
      clients,
      rows,
      table: TABLE,
    };
    const worker = new Worker(new URL('./lib/query-mix-worker.ts', import.meta.url), {
      workerData: job,
    });
    const runWindow = (ms: number) =>
      new Promise<QueryMixWindow>((resolve, reject) => {
        const onError = (error: Error) => {
          worker.off('message', onMessage);
          reject(error);
        };
        const onMessage = (window: QueryMixWindow) => {
          worker.off('error', onError);
          resolve(window);
        };
        worker.once('message', onMessage);
        worker.once('error', onError);
        worker.postMessage({ ms });
      });
    try {
      log('warming up the query mix…');
      await runWindow(2000);
      const loopDir = folder('loop');
      // A writer per condition, looping until told to stop; each pass counted and timed.
      const writers: Record<Condition, () => Promise<void>> = {
        none: async () => {},
        plain: () => writeInSlices(join(loopDir, 'plain.bin'), buffers),
        checkpoint: async () => {
          // Paced as the instance writes its checkpoints while it serves.
          await writeCheckpoint(loopDir, exportGeneration(generation), of, {
            bytesPerSecond: CHECKPOINT_WRITE_BYTES_PER_SECOND,
          });
          await pruneCheckpoints(loopDir, 1);
        },
      };
      const windows = new Map<Condition, Measured[]>(CONDITIONS.map((c) => [c, []]));
      const perWindow: Record<string, string | number>[] = [];
      for (let round = 0; round < alternations; round++) {
        // ABC CBA …: a drift over the run (page cache, heap growth) favours no condition.
        for (const condition of round % 2 === 0 ? CONDITIONS : [...CONDITIONS].reverse()) {
          collect();
          let writing = condition !== 'none';
          let passes = 0;
          let passMs = 0;
          const delay = monitorEventLoopDelay({ resolution: 1 });
          delay.enable();
          const utilisation = performance.eventLoopUtilization();
          const writer = (async () => {
            while (writing) {
              const started = performance.now();
              await writers[condition]();
              passMs += performance.now() - started;
              passes += 1;
            }
          })();
          const window = await runWindow(windowMs);
          const busy = performance.eventLoopUtilization(utilisation).utilization;
          delay.disable();
          writing = false;
          await writer;
          if (window.failures > 0) {
            throw new Error(`${window.failures} queries failed: ${window.firstFailure}`);
          }
          const measured: Measured = {
            window,
            passes,
            passMs,
            busy,
            delayP99: delay.percentile(99) / 1e6,
            delayMax: delay.max / 1e6,
          };
          windows.get(condition)?.push(measured);
          const latencies = [...window.latencies];
          perWindow.push({
            round: round + 1,
            'meanwhile on the main thread': CONDITION_LABELS[condition],
            'queries/s': fmt(latencies.length / (windowMs / 1000)),
            'p50 ms': fmt(percentile(latencies, 50), 2),
            'p99 ms': fmt(percentile(latencies, 99), 2),
            writes:
              condition === 'none' ? '-' : `${passes} × ${fmt(passMs / Math.max(1, passes))} ms`,
            'loop busy': fmt(busy, 2),
            'loop delay p99/max ms': `${fmt(measured.delayP99, 1)} / ${fmt(measured.delayMax, 1)}`,
          });
          log(
            `round ${round + 1}, ${condition}: ${latencies.length} queries, p99 ${fmt(percentile(latencies, 99), 2)} ms`,
          );
        }
      }
      const ofKind = (window: QueryMixWindow, kind?: number) =>
        [...window.latencies].filter((_, i) => kind === undefined || window.kinds[i] === kind);
      const pooled = (condition: Condition, kind?: number) =>
        (windows.get(condition) ?? []).flatMap(({ window }) => ofKind(window, kind));
      /** Each round's p99 against the same round's without writes, the median of those. */
      const roundRatio = (condition: Condition, kind?: number) => {
        const base = windows.get('none') ?? [];
        return median(
          (windows.get(condition) ?? []).map(
            ({ window }, round) =>
              percentile(ofKind(window, kind), 99) /
              percentile(ofKind(base[round]!.window, kind), 99),
          ),
        );
      };
      const without = pooled('none');
      const withWrites = pooled('checkpoint');
      const p99Ratio = roundRatio('checkpoint');
      const pooledRatio = percentile(withWrites, 99) / percentile(without, 99);
      const kindRows = (label: string, kind?: number) => {
        const base = pooled('none', kind);
        return CONDITIONS.map((condition) => {
          const latencies = pooled(condition, kind);
          return {
            queries: label,
            'meanwhile on the main thread': CONDITION_LABELS[condition],
            'p50 ms': fmt(percentile(latencies, 50), 2),
            'p99 ms': fmt(percentile(latencies, 99), 2),
            'p99 ratio': fmt(roundRatio(condition, kind), 2),
            'pooled p99 ratio': fmt(percentile(latencies, 99) / percentile(base, 99), 2),
            'queries/s ratio': fmt(latencies.length / base.length, 2),
          };
        });
      };
      printTable(
        `3a. Each ${windowMs / 1000}-second window, in the order run (${clients} keep-alive clients, closed loop, threads: 1)`,
        perWindow,
      );
      printTable(
        `3b. Query latency (ms) pooled over the ${alternations} windows of each condition; p99 ratio: the median of each round's against its own none`,
        [
          ...kindRows(`the mix (goal: p99 ratio with checkpoints ≤ ${P99_GOAL})`),
          ...kindRows('point lookup by id', 0),
          ...kindRows('IN, filtered, ordered, LIMIT 5', 1),
        ],
      );

      printTable('Summary', [
        {
          goal: `start from a checkpoint ≤ ${START_GOAL}× from the source`,
          measured: `${fmt(startRatio, 3)}× (${fmt(checkpointMs)} vs ${fmt(sourceMs)} ms)`,
          held: startRatio <= START_GOAL ? 'yes' : 'NO',
        },
        {
          goal: 'a checkpoint start is one, and answers as the source does',
          measured: `origin checkpoint ×${checkpointStarts.length}, same answer: ${sameAnswer && matchesSource ? 'yes' : 'no'}`,
          held: sameAnswer && matchesSource ? 'yes' : 'NO',
        },
        {
          goal: 'checkpoint write (info)',
          measured: `${fmt(median(writeMs))} ms for ${mb(diskBytes)} MB; disk ÷ memory ${fmt(diskBytes / snapshotBytes, 2)}`,
          held: '-',
        },
        {
          goal: `query p99 while writing ≤ ${P99_GOAL}× without`,
          measured: `${fmt(p99Ratio, 2)}× (pooled: ${fmt(percentile(withWrites, 99), 2)} vs ${fmt(percentile(without, 99), 2)} ms, ${fmt(pooledRatio, 2)}×)`,
          held: p99Ratio <= P99_GOAL ? 'yes' : 'NO',
        },
      ]);
    } finally {
      worker.postMessage('stop');
      await worker.terminate();
    }
  } finally {
    await served.running.close();
  }
  await database.drop();
} finally {
  await server?.stop();
  server = undefined;
  removeFolders();
  process.off('exit', onExit);
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
