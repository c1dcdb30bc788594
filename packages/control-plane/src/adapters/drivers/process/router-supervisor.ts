import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { RELEASE, type TracingSettings, tracingEnvironment } from '@replix/runtime';
import type { Logger } from 'pino';
import { lastLogLines } from '../log-file.ts';
import { processesUnder, processRunsIn } from '../process-identity.ts';
import type { RouterStatus } from './route-table.ts';
import { ADMIN_PORT_FILE, HAND_OVER_SIGNAL } from './router-process.ts';
import {
  EMPTY_ROUTES,
  type EndpointRoute,
  parseRoutes,
  ROUTES_FILE,
  type RouterRoutes,
  writeRoutesFile,
} from './router-routes.ts';
import { writeFileAtomically } from './write-file-atomically.ts';

/** The `replix` command of this checkout, as instances are started with. */
const REPLIX_BIN = fileURLToPath(new URL('../../../../../cli/bin/replix.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;
/** A router told to stop drains its requests within 10 s (`router-process.ts`). */
const STOP_GRACE_MS = 12_000;
const POLL_MS = 50;
const STATUS_TIMEOUT_MS = 2000;
const LOG_LINES = 15;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function readNumber(path: string): number | null {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

export interface RouterSupervisorOptions {
  /** The control plane's data folder: the router's is `<dataDir>/router`. */
  readonly dataDir: string;
  readonly log: Logger;
  /** The control plane's tracing: the router sends its spans to the same collector. */
  readonly tracing?: TracingSettings | undefined;
}

/**
 * The process driver's side of the endpoint router (`router-process.ts`), one per data folder:
 * starts it (`replix router --dir <dataDir>/router`, detached, so it outlives this process) or
 * adopts the one running (its `pid` file, its working directory, and `GET /status` on its admin
 * port), replaces one of another release without closing a port (the new one listens beside it
 * with `--take-over`, then the old one drains and exits), and changes what it serves by
 * writing the routes file whole and asking it to apply it: `update` resolves once the router
 * serves the new routes, so a deploy's switch is done when the driver's `route` returns.
 */
export class RouterSupervisor {
  readonly dir: string;
  readonly #log: Logger;
  readonly #tracing: TracingSettings | undefined;
  #adminPort: number | null = null;
  /** Updates one at a time, in order, each on the file as the one before left it. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: RouterSupervisorOptions) {
    this.dir = join(options.dataDir, 'router');
    this.#log = options.log;
    this.#tracing = options.tracing;
  }

  /** The routes the file holds now (none when there is no file or it does not parse). */
  routes(): RouterRoutes {
    try {
      return parseRoutes(readFileSync(join(this.dir, ROUTES_FILE), 'utf8'));
    } catch {
      return EMPTY_ROUTES;
    }
  }

  /** The pid of the router serving this data folder, when one runs. */
  pid(): number | null {
    const pid = readNumber(join(this.dir, 'pid'));
    return pid !== null && processRunsIn(pid, this.dir) ? pid : null;
  }

  /**
   * Writes the routes `change` makes of the current ones (when it changes them), makes sure the
   * router runs, and resolves with its status once it has applied them.
   */
  update(change: (endpoints: Map<string, EndpointRoute>) => void): Promise<RouterStatus> {
    const next = this.#queue.then(async () => {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const current = this.routes();
      const endpoints = new Map(current.endpoints);
      change(endpoints);
      let version = current.version;
      if (!sameRoutes(current.endpoints, endpoints)) {
        // A file that did not parse counts as none: its replacement must still be newer than
        // anything the router applied, whatever the file said.
        version = current === EMPTY_ROUTES ? Date.now() : current.version + 1;
        writeRoutesFile(this.dir, { version, endpoints });
      }
      return this.#applied(version);
    });
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Asks the (running or started) router to apply the file, until it reports `version`. */
  async #applied(version: number): Promise<RouterStatus> {
    for (let attempt = 1; ; attempt++) {
      const adminPort = await this.#ensureRunning();
      try {
        const status = await this.#call(adminPort, 'POST', '/apply');
        if (status.problem !== undefined)
          throw new Error(`The router refused its routes file: ${status.problem}`);
        if (status.version >= version) return status;
      } catch (error) {
        if (attempt >= 3) throw error;
        this.#adminPort = null;
      }
      await sleep(POLL_MS);
    }
  }

  async #call(adminPort: number, method: string, path: string): Promise<RouterStatus> {
    const response = await fetch(`http://127.0.0.1:${adminPort}${path}`, {
      method,
      signal: AbortSignal.timeout(STATUS_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`The router answered ${response.status}.`);
    return (await response.json()) as RouterStatus;
  }

  /** The router's status through its admin port, or null when it does not answer. */
  async #status(): Promise<RouterStatus | null> {
    const adminPort = readNumber(join(this.dir, ADMIN_PORT_FILE));
    if (adminPort === null) return null;
    try {
      return await this.#call(adminPort, 'GET', '/status');
    } catch {
      return null;
    }
  }

  /** Adopts the router that runs (replacing it when it is of another release) or starts one. */
  async #ensureRunning(): Promise<number> {
    const known = this.#adminPort;
    if (known !== null && this.pid() !== null) return known;
    const pid = this.pid();
    if (pid !== null) {
      const status = await this.#status();
      if (status !== null && status.pid === pid && status.release === RELEASE) {
        this.#log.info({ pid }, 'router adopted');
        return this.#adopted();
      }
      if (status !== null && status.pid === pid) {
        this.#log.info({ pid, release: status.release }, 'replacing a router of another release');
        await this.#start(true);
        signal(pid, HAND_OVER_SIGNAL);
        return this.#adopted();
      }
      // Running but not answering: a new one cannot share its ports with a stuck one.
      this.#log.warn({ pid }, 'router not answering; restarting it');
      await this.#kill(pid);
    }
    await this.#stopStrays();
    await this.#start(false);
    return this.#adopted();
  }

  #adopted(): number {
    const adminPort = readNumber(join(this.dir, ADMIN_PORT_FILE));
    if (adminPort === null) throw new Error('The router has no admin port.');
    this.#adminPort = adminPort;
    return adminPort;
  }

  /** Starts a router and resolves once it answers on its admin port. */
  async #start(takeOver: boolean): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    rmSync(join(this.dir, ADMIN_PORT_FILE), { force: true });
    const logPath = join(this.dir, 'router.log');
    const logFd = openSync(logPath, 'a', 0o600);
    const env: Record<string, string> = { ...tracingEnvironment(this.#tracing) };
    if (process.env.PATH) env.PATH = process.env.PATH;
    if (process.env.HOME) env.HOME = process.env.HOME;
    let pid: number | undefined;
    try {
      const args = [REPLIX_BIN, 'router', '--dir', this.dir, ...(takeOver ? ['--take-over'] : [])];
      const child = spawn(process.execPath, args, {
        cwd: this.dir,
        env,
        detached: true,
        stdio: ['ignore', logFd, logFd],
      });
      child.unref();
      pid = child.pid;
    } finally {
      closeSync(logFd);
    }
    if (pid === undefined) throw new Error('The router process could not start.');
    writeFileAtomically(join(this.dir, 'pid'), String(pid));
    this.#log.info({ pid, takeOver }, 'router process started');
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const status = await this.#status();
      if (status?.pid === pid) return;
      if (!processRunsIn(pid, this.dir)) {
        await sleep(POLL_MS);
        const lines = await lastLogLines(logPath, LOG_LINES);
        throw new Error(
          `The router process exited before it listened.${lines.length ? ` Last log lines:\n${lines.join('\n')}` : ''}`,
        );
      }
      if (Date.now() > deadline) {
        await this.#kill(pid);
        throw new Error(`The router did not answer within ${START_TIMEOUT_MS / 1000} s.`);
      }
      await sleep(POLL_MS);
    }
  }

  /** Stops the router: it stops accepting and finishes its requests in flight first. */
  async stop(): Promise<void> {
    await this.#queue;
    const pid = this.pid();
    this.#adminPort = null;
    if (pid === null) return;
    signal(pid, 'SIGTERM');
    const deadline = Date.now() + STOP_GRACE_MS;
    while (processRunsIn(pid, this.dir) && Date.now() < deadline) await sleep(POLL_MS);
    if (processRunsIn(pid, this.dir)) await this.#kill(pid);
    rmSync(join(this.dir, 'pid'), { force: true });
    this.#log.info({ pid }, 'router process stopped');
  }

  async #kill(pid: number): Promise<void> {
    signal(pid, 'SIGKILL');
    const deadline = Date.now() + 2000;
    while (processRunsIn(pid, this.dir) && Date.now() < deadline) await sleep(POLL_MS);
  }

  /** A router started by a control plane killed before it wrote the pid file would hold ports. */
  async #stopStrays(): Promise<void> {
    const strays = processesUnder(this.dir).filter((pid) => processRunsIn(pid, this.dir));
    if (strays.length === 0) return;
    this.#log.warn({ pids: strays }, 'stopping unrecorded router processes');
    for (const pid of strays) await this.#kill(pid);
  }
}

function sameRoutes(
  a: ReadonlyMap<string, EndpointRoute>,
  b: ReadonlyMap<string, EndpointRoute>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [databaseId, route] of a)
    if (JSON.stringify(route) !== JSON.stringify(b.get(databaseId))) return false;
  return true;
}

/** Signals the router's process group (it leads one: it was spawned detached). */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name);
  } catch {
    try {
      process.kill(pid, name);
    } catch {}
  }
}
