import type { Logger } from 'pino';
import type { EndpointRouter } from './endpoint-router.ts';
import type { RouterRoutes } from './router-routes.ts';

/** What the router serves, as its admin port reports it to the driver. */
export interface RouterStatus {
  readonly release: string;
  readonly pid: number;
  /** The version of the last routes file applied (0: none yet). */
  readonly version: number;
  /** Each listed database's port, or why its endpoint could not listen (`EADDRINUSE`, …). */
  readonly endpoints: Readonly<Record<string, { port: number } | { error: string }>>;
  /** Why the last read of the routes file was refused, when it was (the routes above stay). */
  readonly problem?: string;
}

/**
 * Makes an `EndpointRouter` serve a routes file: opens the endpoints it lists, points each at
 * its target or has it answer its message, and closes those it no longer lists. Re-pointing is
 * one assignment in the router, so requests in flight finish where they were sent. An endpoint
 * whose port cannot be had is reported and tried again at the next apply; the others serve.
 */
export class RouteTable {
  readonly #router: EndpointRouter;
  readonly #log: Logger;
  readonly #errors = new Map<string, string>();
  #version = 0;
  #problem: string | undefined;

  constructor(router: EndpointRouter, log: Logger) {
    this.#router = router;
    this.#log = log;
  }

  async apply(routes: RouterRoutes): Promise<void> {
    const open = this.#router.ports();
    for (const [databaseId, port] of open) {
      const route = routes.endpoints.get(databaseId);
      // Gone from the file, or moved to another port (a store restored elsewhere): closed here.
      if (!route || (route.port !== 0 && route.port !== port)) await this.#router.close(databaseId);
    }
    for (const databaseId of this.#errors.keys())
      if (!routes.endpoints.has(databaseId)) this.#errors.delete(databaseId);
    await Promise.all(
      [...routes.endpoints].map(async ([databaseId, route]) => {
        try {
          await this.#router.open(databaseId, route.port === 0 ? null : route.port);
          if (route.target)
            this.#router.route(databaseId, route.target.instanceId, route.target.backends);
          else this.#router.unroute(databaseId, route.message);
          this.#errors.delete(databaseId);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? 'open_failed';
          if (this.#errors.get(databaseId) !== code)
            this.#log.warn({ databaseId, port: route.port, code }, 'endpoint could not listen');
          this.#errors.set(databaseId, code);
        }
      }),
    );
    this.#version = routes.version;
    this.#problem = undefined;
  }

  /** A routes file was refused: what is served stays as it is, and the status says why. */
  refused(problem: string): void {
    this.#problem = problem;
  }

  status(release: string, pid: number): RouterStatus {
    const endpoints: Record<string, { port: number } | { error: string }> = {};
    for (const [databaseId, port] of this.#router.ports()) endpoints[databaseId] = { port };
    for (const [databaseId, error] of this.#errors) endpoints[databaseId] = { error };
    return {
      release,
      pid,
      version: this.#version,
      endpoints,
      ...(this.#problem === undefined ? {} : { problem: this.#problem }),
    };
  }
}
