import { join } from 'node:path';
import { writeFileAtomically } from './write-file-atomically.ts';

/**
 * The routes file, `<dataDir>/router/routes.json`: what the router process serves. The process
 * driver is its only writer (whole, by rename); the router reads it and applies it. `version`
 * grows with every write, so the driver can wait until the router has applied its last one.
 */
export interface RouterRoutes {
  readonly version: number;
  readonly endpoints: ReadonlyMap<string, EndpointRoute>;
}

/** One database's endpoint: its port, and its instance's replicas or what it answers without one. */
export interface EndpointRoute {
  /** 0 until the router has bound a port for it (a first deploy); then the port, for life. */
  readonly port: number;
  readonly target: RouteTarget | null;
  /** The 503's message while `target` is null. */
  readonly message: string;
}

export interface RouteTarget {
  readonly instanceId: string;
  /** The replicas' private URLs, `http://127.0.0.1:<port>`. */
  readonly backends: readonly string[];
}

export const ROUTES_FILE = 'routes.json';
/** Far above a machine's worth of databases; a larger file is not one the driver wrote. */
const MAX_FILE_BYTES = 4 * 1024 * 1024;
const MAX_ENDPOINTS = 10_000;
const MAX_BACKENDS = 16;
const MAX_MESSAGE_CHARS = 1000;
/** Database and instance ids (UUIDs); never `__proto__` and the like, never a path. */
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
/** The router forwards to this machine's instances only: nothing else is a target. */
const BACKEND_URL = /^http:\/\/127\.0\.0\.1:([0-9]{1,5})$/;

export class RoutesFileError extends Error {
  override readonly name = 'RoutesFileError';
}

export const EMPTY_ROUTES: RouterRoutes = Object.freeze({ version: 0, endpoints: new Map() });

function isPort(value: unknown, allowZero: boolean): value is number {
  return (
    Number.isInteger(value) &&
    (value as number) <= 65_535 &&
    (value as number) >= (allowZero ? 0 : 1)
  );
}

function parseTarget(databaseId: string, value: unknown): RouteTarget | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value))
    throw new RoutesFileError(`endpoint ${databaseId}: target must be an object or null`);
  const { instanceId, backends } = value as Record<string, unknown>;
  if (typeof instanceId !== 'string' || !ID.test(instanceId))
    throw new RoutesFileError(`endpoint ${databaseId}: target.instanceId is not an id`);
  if (!Array.isArray(backends) || backends.length < 1 || backends.length > MAX_BACKENDS)
    throw new RoutesFileError(
      `endpoint ${databaseId}: target.backends must list 1 to ${MAX_BACKENDS} URLs`,
    );
  for (const backend of backends) {
    const port = typeof backend === 'string' ? BACKEND_URL.exec(backend)?.[1] : undefined;
    if (port === undefined || !isPort(Number(port), false))
      throw new RoutesFileError(
        `endpoint ${databaseId}: a backend is not an http://127.0.0.1:<port> URL`,
      );
  }
  return Object.freeze({ instanceId, backends: Object.freeze([...(backends as string[])]) });
}

/**
 * The routes in a routes file's text; a RoutesFileError naming the first problem when the text
 * is not a routes file the driver could have written (the router then keeps what it serves).
 * Only loopback targets pass: a file that reached the folder some other way cannot send queries
 * (and their API keys) anywhere else.
 */
export function parseRoutes(text: string): RouterRoutes {
  if (text.length > MAX_FILE_BYTES) throw new RoutesFileError('the file is too large');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new RoutesFileError('the file is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new RoutesFileError('the file is not an object');
  const { version, endpoints } = json as Record<string, unknown>;
  if (!Number.isSafeInteger(version) || (version as number) < 0)
    throw new RoutesFileError('version must be a non-negative integer');
  if (typeof endpoints !== 'object' || endpoints === null || Array.isArray(endpoints))
    throw new RoutesFileError('endpoints must be an object');
  const entries = Object.entries(endpoints);
  if (entries.length > MAX_ENDPOINTS)
    throw new RoutesFileError(`more than ${MAX_ENDPOINTS} endpoints`);
  const parsed = new Map<string, EndpointRoute>();
  const ports = new Set<number>();
  for (const [databaseId, value] of entries) {
    if (!ID.test(databaseId)) throw new RoutesFileError('an endpoint key is not a database id');
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new RoutesFileError(`endpoint ${databaseId} is not an object`);
    const { port, target, message } = value as Record<string, unknown>;
    if (!isPort(port, true))
      throw new RoutesFileError(`endpoint ${databaseId}: port must be 0 to 65535`);
    if (port !== 0 && ports.has(port))
      throw new RoutesFileError(`endpoint ${databaseId}: port ${port} is another endpoint's`);
    ports.add(port);
    if (typeof message !== 'string' || message.length > MAX_MESSAGE_CHARS)
      throw new RoutesFileError(
        `endpoint ${databaseId}: message must be a string of at most ${MAX_MESSAGE_CHARS} characters`,
      );
    parsed.set(
      databaseId,
      Object.freeze({ port, target: parseTarget(databaseId, target), message }),
    );
  }
  return Object.freeze({ version: version as number, endpoints: parsed });
}

export function routesText(routes: RouterRoutes): string {
  return `${JSON.stringify({ version: routes.version, endpoints: Object.fromEntries(routes.endpoints) }, null, 1)}\n`;
}

/** Writes the routes file whole (temp file, then rename): the router never reads half of one. */
export function writeRoutesFile(routerDir: string, routes: RouterRoutes): void {
  writeFileAtomically(join(routerDir, ROUTES_FILE), routesText(routes));
}
