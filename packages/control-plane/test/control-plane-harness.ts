import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testPostgres } from '@replix/testkit/vitest';
import pino from 'pino';
import { openStore } from '../src/adapters/store/open-store.ts';
import { resolveControlPlaneConfig } from '../src/config.ts';
import type { RoleName } from '../src/domain/role-names.ts';
import { type RunningControlPlane, startControlPlane } from '../src/start-control-plane.ts';

export type StoreKind = 'pglite' | 'postgres';
/**
 * Both stores, for the suites whose subject differs between them: what a store keeps across a
 * restart or a crash, leases and locks, strings PostgreSQL refuses, stored history.
 */
export const STORE_KINDS: StoreKind[] = ['pglite', 'postgres'];
/**
 * One store each for the API suites, half of them on the embedded store and half on
 * PostgreSQL: their routes and services are the same code over either store (Kysely), the
 * suites on STORE_KINDS test what differs, and running every API suite on both took a fifth
 * of CI's time.
 */
export const EMBEDDED_STORE: StoreKind[] = ['pglite'];
export const POSTGRES_STORE: StoreKind[] = ['postgres'];

/**
 * The environment of a control plane (or CLI) started as a child process: PATH and HOME, the
 * run's shared bundle cache when there is one (vitest.config.ts), and `env`; nothing else of
 * the test's own environment.
 */
export function childProcessEnv(env: Record<string, string>): Record<string, string> {
  const bundleCache = process.env.REPLIX_BUNDLE_CACHE_DIR;
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ...(bundleCache ? { REPLIX_BUNDLE_CACHE_DIR: bundleCache } : {}),
    ...env,
  };
}

export interface TestControlPlane extends RunningControlPlane {
  readonly url: string;
  readonly dataDir: string;
  /** A built-in issuer token; each email is its own account. */
  token(email: string, options?: { admin?: boolean }): Promise<string>;
  /**
   * A request to the API with a bearer token (or none) and JSON in and out, sent in process
   * through Fastify's `inject`: these tests test the API, not the socket (`url` is there for
   * the ones that do).
   */
  request(
    method: string,
    path: string,
    options?: { token?: string | undefined; body?: unknown; headers?: Record<string, string> },
    // biome-ignore lint/suspicious/noExplicitAny: tests assert response bodies field by field
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

/**
 * Starts a control plane on a fresh store of the given kind (PGlite in memory, or a new
 * database on the run's PostgreSQL server) with its own temporary data folder.
 */
export async function startTestControlPlane(
  kind: StoreKind,
  options: { roles?: RoleName[]; env?: Record<string, string> } = {},
): Promise<TestControlPlane> {
  const dataDir = mkdtempSync(join(tmpdir(), 'replix-cp-'));
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  const discard = async () => {
    await dropDatabase();
    rmSync(dataDir, { recursive: true, force: true });
  };
  if (kind === 'postgres') {
    const database = await testPostgres().createDatabase();
    databaseUrl = database.url;
    dropDatabase = () => database.drop();
  }
  let running: RunningControlPlane;
  try {
    running = await startOn(kind, dataDir, databaseUrl, options);
  } catch (error) {
    await discard();
    throw error;
  }
  return wrap(running, dataDir, discard);
}

async function startOn(
  kind: StoreKind,
  dataDir: string,
  databaseUrl: string | undefined,
  options: { roles?: RoleName[]; env?: Record<string, string> },
): Promise<RunningControlPlane> {
  const config = resolveControlPlaneConfig({
    REPLIX_DATA_DIR: dataDir,
    REPLIX_API_PORT: '0',
    REPLIX_SECRET_KEY: randomBytes(32).toString('hex'),
    REPLIX_HEALTH_INTERVAL_MS: '500',
    REPLIX_RECONCILE_INTERVAL_MS: '200',
    // The run's shared bundle cache (vitest.config.ts), when there is one.
    REPLIX_BUNDLE_CACHE_DIR: process.env.REPLIX_BUNDLE_CACHE_DIR,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...options.env,
  });
  const store = await openStore(kind === 'pglite' ? { inMemory: true } : { databaseUrl });
  return startControlPlane(config, {
    roles: options.roles ?? ['api'],
    store,
    log: pino({ level: process.env.REPLIX_TEST_LOG_LEVEL ?? 'silent' }),
  });
}

/** Fastify's inject headers as the `Headers` a fetch returns, so tests read them one way. */
function headersOf(raw: Record<string, string | string[] | number | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return headers;
}

function wrap(
  running: RunningControlPlane,
  dataDir: string,
  discard: () => Promise<void>,
): TestControlPlane {
  const url = running.url as string;
  return {
    ...running,
    url,
    dataDir,
    async token(email, tokenOptions = {}) {
      if (!running.context.issuer) throw new Error('No built-in issuer in this control plane.');
      return running.context.issuer.sign({ email, admin: tokenOptions.admin ?? false });
    },
    async request(method, path, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token) headers.authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body =
          typeof requestOptions.body === 'string'
            ? requestOptions.body
            : JSON.stringify(requestOptions.body);
      }
      if (!running.api) throw new Error('This control plane does not run the api role.');
      // Addressed to the real listener, so links the API builds from the request's host work.
      headers.host ??= new URL(url).host;
      const response = await running.api.inject({
        method: method as 'GET',
        url: path,
        headers,
        ...(body === undefined ? {} : { payload: body }),
      });
      const text = response.body;
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: response.statusCode, body: parsed, headers: headersOf(response.headers) };
    },
    async close() {
      await running.close();
      await discard();
    },
  };
}
