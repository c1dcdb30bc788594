/**
 * The hostile-query fixture of issue 12: a source shaped like the issue's attacks (`p` with
 * 1,000 rows, `c` with 1,000,000 rows pointing at `p`, a 2-row `s` with 36 KB pictures that
 * 25,000 `pay` rows point at), served by `replix serve` as a child process whose heap is
 * bounded like an `xs` instance (512 MB). Shared by the integration tests and `bench/hostile.ts`,
 * so it imports nothing from Vitest.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { heapFlags } from '@replix/instance-protocol';
import type { DatabaseAdmin, TestDatabase } from '@replix/testkit';

/** The `xs` instance size the child is held to (`replix serve --memory-mb`). */
export const INSTANCE_MEMORY_MB = 512;

/** The default `query.timeout_ms`; every hostile query must be answered within it + 1 s. */
export const QUERY_TIMEOUT_MS = 2000;
export const ANSWER_BOUND_MS = QUERY_TIMEOUT_MS + 1000;

export const P_ROWS = 1000;
export const C_ROWS = 1_000_000;
export const PAY_ROWS = 25_000;
export const PICTURE_BYTES = 36 * 1024;

const DDL = `
CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, n INT NOT NULL);
CREATE TABLE c (
  id INT PRIMARY KEY, p_id INT NOT NULL, n INT NOT NULL, v VARCHAR(40) NOT NULL,
  FOREIGN KEY (p_id) REFERENCES p (id)
);
CREATE TABLE s (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, picture MEDIUMBLOB NOT NULL);
CREATE TABLE pay (
  id INT PRIMARY KEY, s_id INT NOT NULL, amount DECIMAL(8,2) NOT NULL,
  FOREIGN KEY (s_id) REFERENCES s (id)
);
INSERT INTO p SELECT seq, CONCAT('p', seq), seq % 10 FROM seq_1_to_${P_ROWS};
INSERT INTO c SELECT seq, 1 + seq % ${P_ROWS}, seq % 97, CONCAT('v', seq, 'a') FROM seq_1_to_${C_ROWS};
INSERT INTO s SELECT seq, CONCAT('s', seq), REPEAT(CHAR(64 + seq), ${PICTURE_BYTES}) FROM seq_1_to_2;
INSERT INTO pay SELECT seq, 1 + seq % 2, seq % 1000 FROM seq_1_to_${PAY_ROWS};
`;

/** Creates and fills the fixture database (MariaDB's sequence engine: a few seconds). */
export function createHostileDatabase(admin: DatabaseAdmin): Promise<TestDatabase> {
  return admin.createDatabase(DDL);
}

/** The cheap primary-key lookup that must keep answering, and its one correct row. */
export const CHEAP_QUERY = 'p (id = 7) { id name }';
export const CHEAP_ROWS = [{ id: 7, name: 'p7' }];

/** One answer as the client saw it: the body parsed when it is JSON, and the elapsed time. */
export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: unknown;
  readonly ms: number;
}

/** A failure to get any answer (connection reset, client timeout), as the test reports it. */
export const NO_ANSWER = 0;

export interface ServeChild {
  readonly url: string;
  readonly apiKey: string;
  /** Present once `replix serve` prints an admin key beside the query key. */
  readonly adminKey: string | undefined;
  readonly pid: number;
  alive(): boolean;
  /** Why the child exited, when it did (code or signal, and its last stderr). */
  exitReport(): string | undefined;
  /** Current and peak resident set size in MB, from /proc (VmRSS, VmHWM); NaN once gone. */
  rssMb(): number;
  peakRssMb(): number;
  /** Sends a query; never throws: no answer within `timeoutMs` is status NO_ANSWER. */
  query(text: string, method?: 'GET' | 'POST', key?: string, timeoutMs?: number): Promise<Answer>;
  /** Sends any request to the instance, with the same never-throw contract. */
  request(path: string, init: RequestInit, timeoutMs?: number): Promise<Answer>;
  stop(): Promise<void>;
}

const replixBin = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));
const KEEP_STDERR_CHARS = 8192;

/** A memory figure of a process in MB; NaN once it is gone (a zombie has no memory lines). */
function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return Number.NaN;
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

async function send(url: string, init: RequestInit, timeoutMs: number): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, text, body, ms: performance.now() - started };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { status: NO_ANSWER, text: reason, body: undefined, ms: performance.now() - started };
  }
}

/**
 * Starts `replix serve --source <url> --memory-mb 512` with the heap flags of an `xs` instance
 * (heap and memory cap sized to fit 512 MB), and waits for its ready line.
 */
export async function startServeChild(
  sourceUrl: string,
  readyTimeoutMs = 180_000,
  /** A schema config file (`--config`), for a test that changes a budget. */
  configFile?: string,
): Promise<ServeChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      // The heap flags an xs instance gets from the process driver; given here, `--memory-mb`
      // needs no second process (this one is the instance whose memory is measured).
      ...heapFlags(INSTANCE_MEMORY_MB),
      replixBin,
      'serve',
      '--source',
      sourceUrl,
      '--port',
      '0',
      '--memory-mb',
      String(INSTANCE_MEMORY_MB),
      ...(configFile ? ['--config', configFile] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REPLIX_LOG_LEVEL: 'warn' } },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-KEEP_STDERR_CHARS);
  });
  let exitReport: string | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitReport = `exited (${signal ?? `code ${code}`}): ${stderr.slice(-2000)}`;
      process.off('exit', killOnExit);
      resolve();
    }),
  );
  const lines = createInterface({ input: child.stdout! });
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`replix serve not ready after ${readyTimeoutMs} ms: ${stderr}`));
    }, readyTimeoutMs);
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, string>;
        if (parsed.event !== 'ready') return;
        clearTimeout(timer);
        resolve(parsed);
      } catch {
        // Not the ready line.
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`replix serve ${exitReport}`));
    });
  });
  const url = ready.url!;
  const apiKey = ready.apiKey!;
  const pid = child.pid!;
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    url,
    apiKey,
    adminKey: ready.adminKey,
    pid,
    alive,
    exitReport: () => exitReport,
    rssMb: () => procStatusMb(pid, 'VmRSS'),
    peakRssMb: () => procStatusMb(pid, 'VmHWM'),
    query(text, method = 'POST', key = apiKey, timeoutMs = ANSWER_BOUND_MS + 2000) {
      const headers = { Authorization: `Bearer ${key}` };
      if (method === 'GET') {
        return send(`${url}/query?q=${encodeURIComponent(text)}`, { headers }, timeoutMs);
      }
      return send(`${url}/query`, { method: 'POST', body: text, headers }, timeoutMs);
    },
    request: (path, init, timeoutMs = ANSWER_BOUND_MS + 2000) =>
      send(`${url}${path}`, init, timeoutMs),
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(force);
    },
  };
}

/** True when `body` is the §7 error envelope: `{error: {code, message}}` and nothing else. */
export function isErrorEnvelope(
  body: unknown,
): body is { error: { code: string; message: string } } {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return (
    Object.keys(body).length === 1 &&
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** True when `body` is the success envelope: `{data: [...], meta: {...}}`. */
export function isSuccessEnvelope(body: unknown): body is { data: unknown[]; meta: object } {
  if (typeof body !== 'object' || body === null) return false;
  const { data, meta } = body as { data?: unknown; meta?: unknown };
  return Array.isArray(data) && typeof meta === 'object' && meta !== null;
}

/** A short description of an answer for assertion messages: status, code, time. */
export function describeAnswer(answer: Answer): string {
  const code = isErrorEnvelope(answer.body) ? answer.body.error.code : answer.text.slice(0, 120);
  return `${answer.status} ${code} in ${Math.round(answer.ms)} ms`;
}
