import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { heapFlags } from '@replix/instance-protocol';
import type { TracingSettings } from '@replix/runtime';
import { withTraceHeaders } from '@replix/runtime/tracing';
import type { Logger } from 'pino';
import { replicaReplicationId } from '../../../domain/replication-id.ts';
import type { Driver, Endpoint, InstanceHandle, LogChunk, ReplicaState } from '../driver.ts';
import { type InstanceKeySet, keysFileText } from '../instance-key-set.ts';
import { type InstanceLaunch, launchEnvironment } from '../instance-launch.ts';
import { InstanceStartError, launchSecrets, redact } from '../instance-start-error.ts';
import { lastLogLines } from '../log-file.ts';
import { processesUnder, processRunsIn } from '../process-identity.ts';
import { NOT_DEPLOYED_MESSAGE } from './endpoint-router.ts';
import { portFreesUp } from './free-port.ts';
import { readReplicaLogs } from './replica-logs.ts';
import { RouterSupervisor } from './router-supervisor.ts';
import { writeFileAtomically } from './write-file-atomically.ts';

export { InstanceStartError } from '../instance-start-error.ts';

/** The `replix` command of this checkout; instances run it with this process's Node. */
const REPLIX_BIN = fileURLToPath(new URL('../../../../../cli/bin/replix.js', import.meta.url));
/**
 * How long SIGTERM gets before SIGKILL: the instance stops accepting, closes idle connections
 * and finishes the queries in flight (bounded by their own timeouts) within it.
 */
const STOP_GRACE_MS = 10_000;
/** How long a new instance gets to introspect its source and listen. */
const DEFAULT_LISTEN_TIMEOUT_MS = 120_000;
const POLL_MS = 100;
/** Lines of the instance log quoted when it fails to start. */
const ERROR_LOG_LINES = 15;
const PORT_ATTEMPTS = 3;
/** More replicas than any plan allows is a bug in the caller, not a launch to try. */
const MAX_REPLICAS = 16;

export interface ProcessDriverOptions {
  /** The control plane's data folder; instances live in its `instances/` folder. */
  readonly dataDir: string;
  readonly log: Logger;
  /**
   * The arguments after `node` and its heap flags (`heapFlags` of the size's `taskMemoryMb`;
   * default `replix serve --artifact <dir> --port <p> --host 127.0.0.1`, `p` often 0); tests
   * run other programs through this, which write the port they listen on to
   * `REPLIX_PORT_FILE`.
   */
  readonly programArgs?: (launch: InstanceLaunch, port: number) => string[];
  readonly listenTimeoutMs?: number;
  /** The control plane's tracing: the endpoint router sends its spans to the same collector. */
  readonly tracing?: TracingSettings | undefined;
  /** `shutdown()` leaves the instances and the router running for the next start to adopt. */
  readonly keepRunningOnShutdown?: boolean;
}

/** How long `openEndpoint` waits for a port that is taken (its old owner may be exiting). */
const ENDPOINT_PORT_WAIT_MS = 6000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function defaultProgramArgs(launch: InstanceLaunch, port: number): string[] {
  return [
    REPLIX_BIN,
    'serve',
    '--artifact',
    launch.artifactDir,
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
  ];
}

function readNumberFile(path: string): number | null {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/**
 * Runs each instance as child processes on this machine, one per replica, in the instance's
 * folder `<dataDir>/instances/<instanceId>/`: `keys.json` (the key ids every replica accepts,
 * by scope: one file, so a key change reaches all of them), `replica-count` (how many it runs), and
 * per replica `instance.log` (its stdout and stderr), `pid`, and `port` (written by the replica
 * once it listens: `REPLIX_PORT_FILE`) — replica 0's in the instance folder itself (where an
 * instance without replicas always kept them), replica k's in `replicas/<k>/`, which is also
 * its working directory. Children are detached, so they outlive a crashed control plane; the
 * next one adopts them by pid, checking that the process still runs in the replica's folder.
 * Replicas listen on private ports; users reach each database through its stable endpoint, a
 * port the endpoint router listens on and spreads over the current instance's replicas: a
 * process of its own, one per data folder (`router-supervisor.ts`, `router-process.ts`), so a
 * control plane that crashes or restarts takes no endpoint down with it.
 */
export class ProcessDriver implements Driver {
  readonly name = 'process';
  readonly instancesDir: string;
  /** `<dataDir>/checkpoints`: a folder per database, and in it one per replica. */
  readonly checkpointsDir: string;
  readonly #log: Logger;
  readonly #router: RouterSupervisor;
  readonly #programArgs: (launch: InstanceLaunch, port: number) => string[];
  readonly #listenTimeoutMs: number;
  readonly #keepRunningOnShutdown: boolean;
  /** Instances this process started or adopted: shutdown() stops them. */
  readonly #owned = new Set<string>();
  /** Our own children, whose exit we see directly. */
  readonly #children = new Map<string, ChildProcess>();

  constructor(options: ProcessDriverOptions) {
    this.instancesDir = join(options.dataDir, 'instances');
    this.checkpointsDir = join(options.dataDir, 'checkpoints');
    this.#log = options.log;
    this.#programArgs = options.programArgs ?? defaultProgramArgs;
    this.#listenTimeoutMs = options.listenTimeoutMs ?? DEFAULT_LISTEN_TIMEOUT_MS;
    this.#keepRunningOnShutdown = options.keepRunningOnShutdown ?? false;
    this.#router = new RouterSupervisor({
      dataDir: options.dataDir,
      log: options.log,
      tracing: options.tracing,
    });
  }

  /** The endpoint router's pid, when it runs (tests: a restarted control plane adopts it). */
  routerPid(): number | null {
    return this.#router.pid();
  }

  /**
   * Lists the endpoint in the routes file (on `port`, or on a port the router picks, then
   * written down so it never moves) and resolves once the router listens on it.
   */
  async openEndpoint(databaseId: string, port: number | null): Promise<Endpoint> {
    const deadline = Date.now() + ENDPOINT_PORT_WAIT_MS;
    let status = await this.#router.update((endpoints) => {
      const current = endpoints.get(databaseId);
      if (current && (port === null || current.port === port)) return;
      endpoints.set(databaseId, {
        port: port ?? 0,
        target: current?.target ?? null,
        message: current?.message ?? NOT_DEPLOYED_MESSAGE,
      });
    });
    for (;;) {
      const state = status.endpoints[databaseId];
      if (state && 'port' in state) {
        const bound = state.port;
        // A port the router picked is written down, so a router started again takes it back.
        await this.#router.update((endpoints) => {
          const current = endpoints.get(databaseId);
          if (current && current.port === 0) endpoints.set(databaseId, { ...current, port: bound });
        });
        return { port: bound, url: `http://127.0.0.1:${bound}` };
      }
      if (Date.now() > deadline)
        throw new Error(
          `The endpoint of database ${databaseId} could not listen on port ${port} (${state?.error ?? 'not opened'}).`,
        );
      await sleep(POLL_MS);
      status = await this.#router.update(() => {});
    }
  }

  async route(databaseId: string, instanceId: string): Promise<void> {
    const urls = (await this.replicas(instanceId)).flatMap((replica) =>
      replica.url === null ? [] : [replica.url],
    );
    if (urls.length === 0) throw new Error(`Instance ${instanceId} has no port to route to.`);
    let open = true;
    await this.#router.update((endpoints) => {
      const current = endpoints.get(databaseId);
      if (!current) {
        open = false;
        return;
      }
      endpoints.set(databaseId, { ...current, target: { instanceId, backends: urls } });
    });
    if (!open) throw new Error(`The endpoint of database ${databaseId} is not open.`);
  }

  async unroute(databaseId: string, message: string): Promise<void> {
    await this.#router.update((endpoints) => {
      const current = endpoints.get(databaseId);
      if (current) endpoints.set(databaseId, { ...current, target: null, message });
    });
  }

  async closeEndpoint(databaseId: string): Promise<void> {
    if (!this.#router.routes().endpoints.has(databaseId)) return;
    await this.#router.update((endpoints) => {
      endpoints.delete(databaseId);
    });
  }

  async dropCheckpoints(databaseId: string): Promise<void> {
    rmSync(this.#checkpointsOf(databaseId), { recursive: true, force: true });
  }

  /**
   * The database's checkpoints, outside any instance's folder: they outlive the instance that
   * wrote them (a redeploy, resize or pause starts another one). Replica 0 writes them in `0/`;
   * the other replicas follow it and read them there.
   */
  #checkpointsOf(databaseId: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(databaseId)) throw new Error('Invalid database id.');
    return join(this.checkpointsDir, databaseId);
  }

  /**
   * Replica 0 replicates from the source, checkpoints into the database's folder and, with
   * other replicas, keeps the change feed they follow; each other replica starts from those
   * checkpoints and follows replica 0 (docs/replication.md, "Replicas that follow").
   */
  #replicaRole(
    launch: InstanceLaunch,
    ordinal: number,
    leaderPort: number | null,
  ): Record<string, string> {
    const role: Record<string, string> = {
      REPLIX_CHECKPOINT_DIR: join(this.#checkpointsOf(launch.databaseId), '0'),
    };
    if (launch.replicas > 1 && ordinal === 0) role.REPLIX_CHANGE_FEED = '1';
    if (ordinal > 0 && leaderPort !== null)
      role.REPLIX_FOLLOW_URL = `http://127.0.0.1:${leaderPort}`;
    return role;
  }

  folderOf(instanceId: string): string {
    // Ids come from our store, but a path segment must never climb out of the folder.
    if (!/^[A-Za-z0-9_-]+$/.test(instanceId)) throw new Error('Invalid instance id.');
    return join(this.instancesDir, instanceId);
  }

  /** Replica 0 lives in the instance folder (as an instance without replicas did), k in `replicas/<k>`. */
  replicaFolderOf(instanceId: string, ordinal: number): string {
    const folder = this.folderOf(instanceId);
    return ordinal === 0 ? folder : join(folder, 'replicas', String(ordinal));
  }

  /** How many replicas the instance runs (its `replica-count` file; 1 for an instance without one). */
  #replicaCount(instanceId: string): number {
    return readNumberFile(join(this.folderOf(instanceId), 'replica-count')) ?? 1;
  }

  /** Every ordinal with a folder, whatever the count says (stop and reap leave none running). */
  #ordinalsPresent(instanceId: string): number[] {
    const replicasDir = join(this.folderOf(instanceId), 'replicas');
    const others = existsSync(replicasDir)
      ? readdirSync(replicasDir)
          .filter((name) => /^[1-9][0-9]{0,2}$/.test(name))
          .map(Number)
      : [];
    return [0, ...others.sort((a, b) => a - b)];
  }

  #ordinals(instanceId: string): number[] {
    return Array.from({ length: this.#replicaCount(instanceId) }, (_, ordinal) => ordinal);
  }

  #pidOf(instanceId: string, ordinal: number): number | null {
    return readNumberFile(join(this.replicaFolderOf(instanceId, ordinal), 'pid'));
  }

  #replicaAlive(instanceId: string, ordinal: number): boolean {
    const pid = this.#pidOf(instanceId, ordinal);
    return pid !== null && processRunsIn(pid, this.replicaFolderOf(instanceId, ordinal));
  }

  /**
   * Starts the replicas that do not run and adopts those that do (each replica by its own pid
   * and folder), stops replicas beyond `launch.replicas`, and resolves with replica 0's handle
   * once every replica listens. When a replica fails, the others are left to `stop`.
   */
  async start(launch: InstanceLaunch): Promise<InstanceHandle> {
    if (!Number.isInteger(launch.replicas) || launch.replicas < 1 || launch.replicas > MAX_REPLICAS)
      throw new Error(`An instance runs 1 to ${MAX_REPLICAS} replicas.`);
    const folder = this.folderOf(launch.instanceId);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileAtomically(join(folder, 'replica-count'), String(launch.replicas));
    const extra = this.#ordinalsPresent(launch.instanceId).filter((k) => k >= launch.replicas);
    await Promise.all(extra.map((ordinal) => this.#stopReplica(launch.instanceId, ordinal)));
    this.#owned.add(launch.instanceId);
    const ordinals = this.#ordinals(launch.instanceId);
    // Replica 0 first: the others follow its feed, at the address it listens on.
    const leader = await this.#startReplica(launch, 0, null);
    // Every replica is waited for, so no start is still under way when the caller stops them.
    const results = await Promise.allSettled(
      ordinals
        .filter((ordinal) => ordinal > 0)
        .map((ordinal) => this.#startReplica(launch, ordinal, leader.port)),
    );
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    return leader;
  }

  async #startReplica(
    launch: InstanceLaunch,
    ordinal: number,
    leaderPort: number | null,
  ): Promise<InstanceHandle> {
    const folder = this.replicaFolderOf(launch.instanceId, ordinal);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const secrets = launchSecrets(launch);
    const runningPid = this.#pidOf(launch.instanceId, ordinal);
    const knownPort = readNumberFile(join(folder, 'port'));
    if (runningPid !== null && processRunsIn(runningPid, folder)) {
      // Its port file is written once it listens: one still starting is waited for.
      this.#log.info(
        { instanceId: launch.instanceId, replica: ordinal, pid: runningPid },
        'instance adopted',
      );
      const port = await this.#waitListening(launch.instanceId, ordinal, runningPid, secrets);
      return this.#handle(launch.instanceId, runningPid, port);
    }
    await this.#stopStrays(launch.instanceId, ordinal);
    this.#writeKeys(this.folderOf(launch.instanceId), launch.keys);
    // A restart keeps its private port when that is free again; otherwise (and always on a
    // first start) the instance listens on port 0 and writes the port the kernel gave it to
    // its `port` file. The driver learns the port only from that file, written by the process
    // that holds the socket, so an answer on it is never another program's.
    let port = knownPort !== null && (await portFreesUp(knownPort)) ? knownPort : 0;
    for (let attempt = 1; ; attempt++) {
      const pid = this.#spawn(launch, ordinal, port, leaderPort);
      try {
        const listening = await this.#waitListening(launch.instanceId, ordinal, pid, secrets);
        return this.#handle(launch.instanceId, pid, listening);
      } catch (error) {
        const taken = error instanceof InstanceStartError && error.message.includes('EADDRINUSE');
        if (!taken || attempt >= PORT_ATTEMPTS) throw error;
        port = 0;
      }
    }
  }

  #spawn(launch: InstanceLaunch, ordinal: number, port: number, leaderPort: number | null): number {
    const folder = this.replicaFolderOf(launch.instanceId, ordinal);
    const childKey = `${launch.instanceId}/${ordinal}`;
    rmSync(join(folder, 'port'), { force: true });
    const logFd = openSync(join(folder, 'instance.log'), 'a', 0o600);
    let child: ChildProcess;
    try {
      const keysFile = join(this.folderOf(launch.instanceId), 'keys.json');
      const env: Record<string, string> = launchEnvironment(launch, keysFile);
      // Each replica follows the source under its own slot or binlog client.
      env.REPLIX_REPLICATION_ID = replicaReplicationId(launch.replicationId, ordinal);
      env.REPLIX_PORT_FILE = join(folder, 'port');
      Object.assign(env, this.#replicaRole(launch, ordinal, leaderPort));
      mkdirSync(env.REPLIX_CHECKPOINT_DIR as string, { recursive: true, mode: 0o700 });
      if (process.env.PATH) env.PATH = process.env.PATH;
      if (process.env.HOME) env.HOME = process.env.HOME;
      // The heap is bounded by the instance size, so a query cannot grow it past the task.
      const nodeArgs = heapFlags(launch.settings.taskMemoryMb);
      child = spawn(process.execPath, [...nodeArgs, ...this.#programArgs(launch, port)], {
        cwd: folder,
        env,
        detached: true,
        stdio: ['ignore', logFd, logFd],
      });
    } finally {
      closeSync(logFd);
    }
    const pid = child.pid;
    if (pid === undefined) throw new InstanceStartError('The instance process could not start.');
    // The control plane may exit without waiting for (or killing) its instances.
    child.unref();
    child.once('exit', () => {
      if (this.#children.get(childKey) === child) this.#children.delete(childKey);
    });
    this.#children.set(childKey, child);
    this.#owned.add(launch.instanceId);
    writeFileAtomically(join(folder, 'pid'), String(pid));
    this.#log.info(
      { instanceId: launch.instanceId, replica: ordinal, pid, port },
      'instance process started',
    );
    return pid;
  }

  /**
   * Resolves with the instance's port once it has written its port file and answers HTTP
   * there; rejects when the process is gone or the listen timeout passes.
   */
  async #waitListening(
    instanceId: string,
    ordinal: number,
    pid: number,
    secrets: readonly string[],
  ): Promise<number> {
    const folder = this.replicaFolderOf(instanceId, ordinal);
    const deadline = Date.now() + this.#listenTimeoutMs;
    while (true) {
      const port = readNumberFile(join(folder, 'port'));
      if (port !== null) {
        try {
          await fetch(`http://127.0.0.1:${port}/health`, {
            headers: withTraceHeaders({}),
            signal: AbortSignal.timeout(1000),
          });
          if (processRunsIn(pid, folder)) return port;
        } catch {}
      }
      if (!processRunsIn(pid, folder)) {
        // Give the log a moment: the exit can be seen before the last write lands.
        await sleep(50);
        const lines = await lastLogLines(join(folder, 'instance.log'), ERROR_LOG_LINES);
        throw new InstanceStartError(
          redact(
            `The instance process exited before it listened.${lines.length ? ` Last log lines:\n${lines.join('\n')}` : ''}`,
            secrets,
          ),
        );
      }
      if (Date.now() > deadline) {
        await this.stop(instanceId);
        throw new InstanceStartError(
          `The instance did not listen within ${Math.round(this.#listenTimeoutMs / 1000)} s.`,
        );
      }
      await sleep(POLL_MS);
    }
  }

  #handle(instanceId: string, pid: number, port: number): InstanceHandle {
    return {
      instanceId,
      privateUrl: `http://127.0.0.1:${port}`,
      containerRef: `process:${pid}`,
      port,
      pid,
    };
  }

  /** Stops every replica of the instance (all at once: each finishes its own queries in flight). */
  async stop(instanceId: string): Promise<void> {
    const ordinals = this.#ordinalsPresent(instanceId);
    await Promise.all(ordinals.map((ordinal) => this.#stopReplica(instanceId, ordinal)));
    this.#owned.delete(instanceId);
  }

  async #stopReplica(instanceId: string, ordinal: number): Promise<void> {
    const folder = this.replicaFolderOf(instanceId, ordinal);
    const pid = this.#pidOf(instanceId, ordinal);
    if (pid !== null && processRunsIn(pid, folder)) {
      this.#signal(pid, 'SIGTERM');
      const deadline = Date.now() + STOP_GRACE_MS;
      while (processRunsIn(pid, folder) && Date.now() < deadline) await sleep(POLL_MS);
      if (processRunsIn(pid, folder)) {
        this.#log.warn(
          { instanceId, replica: ordinal, pid },
          'instance ignored SIGTERM; killing it',
        );
        this.#signal(pid, 'SIGKILL');
        const killDeadline = Date.now() + 2000;
        while (processRunsIn(pid, folder) && Date.now() < killDeadline) await sleep(POLL_MS);
      }
      this.#log.info({ instanceId, replica: ordinal, pid }, 'instance process stopped');
    }
    rmSync(join(folder, 'pid'), { force: true });
    this.#children.delete(`${instanceId}/${ordinal}`);
  }

  /**
   * Kills the processes running in a replica's folder that its pid file does not name: a
   * control plane killed between spawning a replica and recording its pid leaves one, which no
   * later start would see (it would start a second beside it) and no reap would stop (its
   * instance is live).
   */
  async #stopStrays(instanceId: string, ordinal: number): Promise<void> {
    const folder = this.replicaFolderOf(instanceId, ordinal);
    const strays = processesUnder(folder).filter((pid) => processRunsIn(pid, folder));
    if (strays.length === 0) return;
    this.#log.warn({ instanceId, replica: ordinal, pids: strays }, 'stopping unrecorded processes');
    for (const pid of strays) this.#signal(pid, 'SIGKILL');
    const deadline = Date.now() + 2000;
    while (strays.some((pid) => processRunsIn(pid, folder)) && Date.now() < deadline) {
      await sleep(POLL_MS);
    }
  }

  /** Signals the instance's whole process group (it leads one: it was spawned detached). */
  #signal(pid: number, signal: NodeJS.Signals): void {
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {}
    }
  }

  async isAlive(instanceId: string): Promise<boolean> {
    if (!existsSync(this.folderOf(instanceId))) return false;
    return this.#ordinals(instanceId).every((ordinal) => this.#replicaAlive(instanceId, ordinal));
  }

  async replicas(instanceId: string): Promise<ReplicaState[]> {
    if (!existsSync(this.folderOf(instanceId))) return [];
    return this.#ordinals(instanceId).map((ordinal) => {
      const port = readNumberFile(join(this.replicaFolderOf(instanceId, ordinal), 'port'));
      return {
        ordinal,
        url: port === null ? null : `http://127.0.0.1:${port}`,
        alive: this.#replicaAlive(instanceId, ordinal),
      };
    });
  }

  async updateKeys(instanceId: string, keys: InstanceKeySet): Promise<void> {
    const folder = this.folderOf(instanceId);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    this.#writeKeys(folder, keys);
  }

  #writeKeys(folder: string, keys: InstanceKeySet): void {
    writeFileAtomically(join(folder, 'keys.json'), keysFileText(keys));
  }

  /** The replicas' logs merged in time order (token format: `replica-logs.ts`). */
  readLogs(instanceId: string, token: string | undefined): Promise<LogChunk> {
    const paths = this.#ordinals(instanceId).map((ordinal) =>
      join(this.replicaFolderOf(instanceId, ordinal), 'instance.log'),
    );
    return readReplicaLogs(paths, token);
  }

  /**
   * Kills the processes of instance folders that are not live in the store (removed or never
   * recorded: left by a control plane that crashed mid-deploy) and removes those folders.
   * The folders are listed before the live ids are asked for: an instance row is written
   * before its folder, so a folder being created for a newly recorded instance is never taken
   * for an orphan.
   */
  async reapOrphans(liveInstanceIds: () => Promise<Iterable<string>>): Promise<string[]> {
    const folders = this.instanceFolders();
    const live = new Set(await liveInstanceIds());
    const reaped: string[] = [];
    for (const instanceId of folders) {
      if (live.has(instanceId)) continue;
      if ((await this.replicas(instanceId)).some((replica) => replica.alive)) {
        this.#log.warn({ instanceId }, 'stopping an orphaned instance process');
        reaped.push(instanceId);
      }
      await this.stop(instanceId);
      rmSync(this.folderOf(instanceId), { recursive: true, force: true });
    }
    return reaped;
  }

  /** The instance ids that have a folder here. */
  instanceFolders(): string[] {
    if (!existsSync(this.instancesDir)) return [];
    return readdirSync(this.instancesDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && /^[A-Za-z0-9_-]+$/.test(entry.name))
      .map((entry) => entry.name);
  }

  async shutdown(): Promise<string[]> {
    if (this.#keepRunningOnShutdown) {
      // As after a crash: the next start adopts them by pid, and no query is refused between.
      this.#log.info(
        { instances: this.#owned.size },
        'leaving the instances and the endpoint router running for the next start',
      );
      return [];
    }
    // The instances stop too, so the endpoints have nothing left to serve; the routes file stays
    // (the ports with it), and the next start serves them again.
    await this.#router.stop();
    const stopped = [...this.#owned];
    await Promise.all(stopped.map((instanceId) => this.stop(instanceId)));
    return stopped;
  }
}
