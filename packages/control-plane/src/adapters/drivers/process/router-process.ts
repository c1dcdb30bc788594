import { existsSync, type FSWatcher, readFileSync, watch } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import process from 'node:process';
import { RELEASE } from '@replix/runtime';
import type { Logger } from 'pino';
import { EndpointRouter } from './endpoint-router.ts';
import { type RouterStatus, RouteTable } from './route-table.ts';
import { parseRoutes, ROUTES_FILE, RoutesFileError } from './router-routes.ts';
import { writeFileAtomically } from './write-file-atomically.ts';

/** The file the router writes its admin port to, once it answers there. */
export const ADMIN_PORT_FILE = 'admin-port';
/** The safety net under `fs.watch`, which can miss a rename on some file systems. */
const REREAD_MS = 1000;
/** How long a router that is told to stop lets its requests in flight finish. */
const DRAIN_MS = 10_000;

/** What the driver sends a router being replaced (SIGTERM is a plain stop). */
export const HAND_OVER_SIGNAL = 'SIGUSR2';

export interface RouterOptions {
  /** `<dataDir>/router`: the routes file is read from it, the admin port written to it. */
  readonly dir: string;
  readonly log: Logger;
  /**
   * An upgrade: bind the routes file's ports beside the router being replaced (both listen
   * with `reusePort`) rather than waiting for them to be free.
   */
  readonly takeOver?: boolean;
}

export interface RunningRouter {
  readonly adminPort: number;
  status(): RouterStatus;
  /**
   * Stops accepting, lets requests in flight finish (bounded), and closes everything. With
   * `handOver` (a newer router took the ports over) kept-alive connections are not cut while
   * idle but end after their next answer, so their clients reconnect to the new router.
   */
  stop(options?: { readonly handOver?: boolean }): Promise<void>;
  /** Resolves when the router stopped: told to, or its folder was removed. */
  readonly stopped: Promise<void>;
}

function readRoutesText(dir: string): string | null {
  try {
    return readFileSync(join(dir, ROUTES_FILE), 'utf8');
  } catch {
    return null;
  }
}

/**
 * The endpoint router as a process of its own (`replix router --dir <dataDir>/router`): it
 * serves the routes file the process driver writes, re-reading it when it changes (`fs.watch`,
 * and every second as a safety net) or when the driver asks (`POST /apply` on the admin port,
 * answered once applied, which is how a deploy's switch waits for it). A file that does not
 * parse is logged and refused, and the routes served stay. `GET /status` is the driver's
 * health check. It loads nothing of the control plane but the router, so it starts in a
 * fraction of a second, and it outlives the control plane: a crash or restart of `replix start`
 * leaves every endpoint answering. It exits when told to (SIGTERM: the requests in flight
 * finish first) or when its folder is removed.
 */
export async function startRouter(options: RouterOptions): Promise<RunningRouter> {
  const { dir, log } = options;
  const initialText = readRoutesText(dir);
  let joinPorts: number[] = [];
  if (options.takeOver && initialText !== null) {
    try {
      joinPorts = [...parseRoutes(initialText).endpoints.values()].map((route) => route.port);
    } catch {}
  }
  // A taken port fails its endpoint's open at once: the next re-read tries it again, and the
  // other endpoints are served meanwhile.
  const router = new EndpointRouter({ log, joinPorts, portWaitMs: 0 });
  const table = new RouteTable(router, log);
  let appliedText: string | null = null;
  let retryOpens = false;

  const reload = async (): Promise<void> => {
    const text = readRoutesText(dir);
    // Unchanged and fully served: nothing to do. A port that could not be had is tried again.
    if (text === null || (text === appliedText && !retryOpens)) return;
    try {
      const routes = parseRoutes(text);
      await table.apply(routes);
      appliedText = text;
      const status = table.status(RELEASE, process.pid);
      retryOpens = Object.values(status.endpoints).some((endpoint) => 'error' in endpoint);
    } catch (error) {
      if (!(error instanceof RoutesFileError)) throw error;
      if (text !== appliedText) log.warn({ problem: error.message }, 'routes file refused');
      appliedText = text;
      table.refused(error.message);
    }
  };
  let queue: Promise<void> = Promise.resolve();
  /** One reload at a time, in order: a request for one waits for the reload after it. */
  const reloadSoon = (): Promise<void> => {
    queue = queue.then(reload).catch((error: unknown) => {
      log.error({ err: error }, 'routes could not be applied');
    });
    return queue;
  };

  await reloadSoon();
  router.stopJoining();

  const admin = createServer((req, res) => {
    const answer = () => {
      const body = JSON.stringify(table.status(RELEASE, process.pid));
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(body);
    };
    req.resume();
    if (req.method === 'GET' && req.url === '/status') answer();
    else if (req.method === 'POST' && req.url === '/apply') reloadSoon().then(answer);
    else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":{"code":"not_found","message":"No such route."}}');
    }
  });
  const adminPort = await listenAdmin(admin);
  writeFileAtomically(join(dir, ADMIN_PORT_FILE), String(adminPort));

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, () => void reloadSoon());
    watcher.on('error', () => {});
  } catch {}
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  const stop = (stopOptions: { readonly handOver?: boolean } = {}): Promise<void> => {
    stopping ??= (async () => {
      clearInterval(timer);
      watcher?.close();
      admin.close();
      admin.closeAllConnections();
      await router.drain(DRAIN_MS, stopOptions.handOver ?? false);
      resolveStopped();
    })();
    return stopping;
  };
  const timer = setInterval(() => {
    if (!existsSync(dir)) {
      log.info({ dir }, 'router folder removed; stopping');
      void stop();
      return;
    }
    void reloadSoon();
  }, REREAD_MS);
  log.info(
    { pid: process.pid, adminPort, endpoints: router.ports().size, takeOver: !!options.takeOver },
    'router listening',
  );
  return { adminPort, status: () => table.status(RELEASE, process.pid), stop, stopped };
}

function listenAdmin(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}
