import {
  type ChangeLogReadiness,
  openSshTunnel,
  protocolMismatch,
  type SourceBackend,
  SourceError,
  type SourceErrorCode,
  type SourceTlsMode,
  type SshTunnel,
  SshTunnelError,
  serverProbeFor,
} from '@replix/sources';

/** A server to test with raw credentials (the connection test's body, resolved). */
export interface TestConnectionInput {
  readonly backend: SourceBackend;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** '' for a user without a password. */
  readonly password: string;
  readonly database?: string | undefined;
  readonly tlsMode?: SourceTlsMode | undefined;
  readonly ssh?:
    | {
        readonly host: string;
        readonly port: number;
        readonly user: string;
        readonly privateKey: string;
      }
    | undefined;
}

/**
 * Which check of a connection test failed: the SSH tunnel, reaching the server, the login,
 * the login database, or a query on the server once logged in.
 */
export const FAILED_CHECKS = ['ssh', 'network', 'login', 'database', 'server'] as const;
export type FailedCheck = (typeof FAILED_CHECKS)[number];

/** TestConnectionResult (spec §2), plus which check failed. */
export interface TestConnectionResult {
  readonly ok: boolean;
  readonly error?: string;
  readonly failedCheck?: FailedCheck;
  /** The connector's stable code for `error` (not in the API's answer: for explaining failures). */
  readonly errorCode?: SourceErrorCode;
  readonly latencyMs?: number;
  readonly estimatedSizeGb?: number;
  readonly availableSchemas?: string[];
  readonly binlog?: Omit<ChangeLogReadiness, 'issues'> & { issues: string[] };
}

const BYTES_PER_GB = 1_000_000_000;

/**
 * Connects with raw credentials (through the SSH tunnel when given) and reports what the
 * engine's server probe found. A server that cannot be reached or refuses the login is an
 * answer, `{ok: false, error}`, with the connector's safe message; anything else is a bug and
 * is thrown.
 */
export async function testConnection(input: TestConnectionInput): Promise<TestConnectionResult> {
  let tunnel: SshTunnel | undefined;
  try {
    if (input.ssh) tunnel = await openSshTunnel(input.ssh, { host: input.host, port: input.port });
    // A port of another engine's server is named as such, not left to the driver, which waits
    // for a greeting that never comes (a PostgreSQL port) or cannot read the one that does.
    const mismatch = await protocolMismatch(
      input.backend,
      tunnel?.host ?? input.host,
      tunnel?.port ?? input.port,
    );
    if (mismatch) return { ok: false, error: mismatch, failedCheck: 'server' };
    const report = await serverProbeFor(input.backend).probe({
      host: tunnel?.host ?? input.host,
      port: tunnel?.port ?? input.port,
      user: input.user,
      password: input.password,
      database: input.database,
      // As `sourceUrlThroughTunnel` does for connectors: through a tunnel, the certificate
      // must still name the real host.
      tls: { mode: input.tlsMode ?? 'prefer', ...(tunnel ? { serverName: input.host } : {}) },
    });
    return {
      ok: true,
      latencyMs: report.latencyMs,
      ...(report.estimatedSizeBytes === undefined
        ? {}
        : { estimatedSizeGb: Math.round((report.estimatedSizeBytes / BYTES_PER_GB) * 1e6) / 1e6 }),
      availableSchemas: [...report.availableSchemas],
      binlog: { ...report.changeLog, issues: [...report.changeLog.issues] },
    };
  } catch (error) {
    if (error instanceof SourceError) {
      return {
        ok: false,
        error: error.message,
        failedCheck: failedCheckOf(error),
        errorCode: error.code,
      };
    }
    throw error;
  } finally {
    await tunnel?.close();
  }
}

function failedCheckOf(error: SourceError): FailedCheck {
  if (error instanceof SshTunnelError) return 'ssh';
  switch (error.code) {
    case 'source_unreachable':
      return 'network';
    case 'source_auth_failed':
      return 'login';
    case 'source_database_not_found':
      return 'database';
    default:
      return 'server';
  }
}
