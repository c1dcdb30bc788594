import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { SourceConfigError } from './errors.ts';
import {
  backendOfUrlScheme,
  SOURCE_DIALECTS,
  SOURCE_TLS_MODES,
  type SourceTlsMode,
} from './source-dialect.ts';

/** The TLS settings of a MySQL or PostgreSQL source (URL: `sslmode`, `sslrootcert`, `sslservername`). */
export interface SourceTls {
  readonly mode: SourceTlsMode;
  /**
   * A PEM file of the CA certificates `verify-full` trusts instead of Node's bundled roots
   * (libpq's `sslrootcert`). Ignored by the other modes, which check no certificate.
   */
  readonly rootCertFile?: string | undefined;
  /**
   * The host name a `verify-full` certificate must carry when the connection's host is not it,
   * e.g. an SSH tunnel's local end (see `sourceUrlThroughTunnel`).
   */
  readonly serverName?: string | undefined;
}

/** Without `sslmode`, as libpq and the MySQL client do: TLS when the server offers it. */
export const DEFAULT_TLS_MODE: SourceTlsMode = 'prefer';

function isTlsMode(value: string): value is SourceTlsMode {
  return (SOURCE_TLS_MODES as readonly string[]).includes(value);
}

/**
 * The TLS settings in a MySQL or PostgreSQL source URL's query, undefined when it has none
 * (the connector then uses `prefer`). Errors quote neither the URL nor the file name.
 */
export function tlsFromUrlParams(params: URLSearchParams): SourceTls | undefined {
  const mode = params.get('sslmode');
  const rootCertFile = params.get('sslrootcert') ?? undefined;
  const serverName = params.get('sslservername') ?? undefined;
  if (mode === null && rootCertFile === undefined && serverName === undefined) return undefined;
  if (mode !== null && !isTlsMode(mode)) {
    throw new SourceConfigError(
      'invalid_source_url',
      `The source URL has an unsupported sslmode; use ${SOURCE_TLS_MODES.join(', ')}.`,
    );
  }
  if (rootCertFile === '' || serverName === '') {
    throw new SourceConfigError('invalid_source_url', 'The source URL has an empty TLS setting.');
  }
  return {
    mode: mode ?? DEFAULT_TLS_MODE,
    ...(rootCertFile === undefined ? {} : { rootCertFile }),
    ...(serverName === undefined ? {} : { serverName }),
  };
}

/**
 * The source URL with its host and port replaced by an SSH tunnel's local end. The original
 * host stays the name a `verify-full` certificate is checked against (`sslservername`), so TLS
 * through the tunnel verifies the real server. MySQL and PostgreSQL URLs only.
 */
export function sourceUrlThroughTunnel(
  sourceUrl: string,
  tunnel: { readonly host: string; readonly port: number },
): string {
  const url = new URL(sourceUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const backend = backendOfUrlScheme(url.protocol.slice(0, -1));
  const sslmode = backend === undefined || SOURCE_DIALECTS[backend].tlsUrlStyle === 'sslmode';
  if (sslmode && !url.searchParams.has('sslservername')) {
    url.searchParams.set('sslservername', host);
  }
  url.hostname = tunnel.host.includes(':') ? `[${tunnel.host}]` : tunnel.host;
  url.port = String(tunnel.port);
  return url.toString();
}

/** Node TLS options for verify-full and the other modes; shared by every driver. */
export interface NodeTlsOptions {
  readonly rejectUnauthorized: boolean;
  readonly ca?: string | undefined;
  readonly checkServerIdentity?: (host: string, cert: PeerCertificate) => Error | undefined;
  /** SNI: the server's name, when the driver connects to another address (a tunnel). */
  readonly servername?: string | undefined;
}

/** The CA bundle of `verify-full`, read at each connect so a rotated file is picked up. */
function rootCerts(tls: SourceTls): string | undefined {
  if (tls.rootCertFile === undefined) return undefined;
  try {
    return readFileSync(tls.rootCertFile, 'utf8');
  } catch {
    throw new SourceConfigError(
      'invalid_source_url',
      'The TLS root certificate file (sslrootcert) cannot be read.',
    );
  }
}

/**
 * The options a TLS connection is made with: `verify-full` checks the chain (against
 * `rootCertFile` when given) and the host name (`serverName` when given, else the host the
 * driver connects to); `prefer` and `require` accept any certificate, as libpq does.
 */
export function nodeTlsOptions(tls: SourceTls): NodeTlsOptions {
  if (tls.mode !== 'verify-full') return { rejectUnauthorized: false };
  const serverName = tls.serverName;
  return {
    rejectUnauthorized: true,
    ca: rootCerts(tls),
    ...(serverName === undefined
      ? {}
      : {
          checkServerIdentity: (_host: string, cert: PeerCertificate) =>
            checkServerIdentity(serverName, cert),
          // TLS sends no IP address as a server name.
          ...(isIP(serverName) === 0 ? { servername: serverName } : {}),
        }),
  };
}

/**
 * Whether to use TLS on each new connection to one source, following its mode: `disable`
 * never, `require` and `verify-full` always (a server without TLS is then an error), `prefer`
 * first tries TLS and settles for plain when the server answers that it has none. What
 * `prefer` learns is kept, so later connections of the same connector do not ask again.
 */
export class TlsNegotiation {
  readonly tls: SourceTls;
  readonly #refusesTls: (error: unknown) => boolean;
  /** `prefer` only: whether the server offers TLS, once a connection has told. */
  #offered: boolean | undefined;

  /** `refusesTls` recognises the driver's "the server has no TLS" error. */
  constructor(tls: SourceTls | undefined, refusesTls: (error: unknown) => boolean) {
    this.tls = tls ?? { mode: DEFAULT_TLS_MODE };
    this.#refusesTls = refusesTls;
  }

  get mode(): SourceTlsMode {
    return this.tls.mode;
  }

  /** Whether new connections use TLS; undefined while `prefer` has not connected yet. */
  get useTls(): boolean | undefined {
    if (this.mode === 'prefer') return this.#offered;
    return this.mode !== 'disable';
  }

  /** Opens a connection with `open(useTls)`; for `prefer`, retries without TLS once if refused. */
  async connect<T>(open: (useTls: boolean) => Promise<T>): Promise<T> {
    if (this.mode === 'disable') return open(false);
    if (this.mode !== 'prefer') return open(true);
    if (this.#offered !== undefined) return open(this.#offered);
    try {
      const connection = await open(true);
      this.#offered = true;
      return connection;
    } catch (error) {
      if (!this.#refusesTls(error)) throw error;
      this.#offered = false;
      return open(false);
    }
  }

  /**
   * A pool whose connections all use TLS or all do not. Pools connect lazily, so while
   * `prefer` does not know yet, the pool is tried with `check` (its first connection stays in
   * the pool) and made again without TLS if the server refuses it.
   */
  async pool<P>(
    create: (useTls: boolean) => P,
    check: (pool: P) => Promise<unknown>,
    end: (pool: P) => Promise<unknown>,
  ): Promise<P> {
    const known = this.useTls;
    if (known !== undefined) return create(known);
    return this.connect(async (useTls) => {
      const pool = create(useTls);
      try {
        await check(pool);
      } catch (error) {
        await end(pool).catch(() => {});
        throw error;
      }
      return pool;
    });
  }
}
