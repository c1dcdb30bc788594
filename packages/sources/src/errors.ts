import type { SourceBackend } from './source-dialect.ts';

/**
 * Stable codes for everything a connector can fail with; callers (CLI, HTTP API) switch on
 * these, never on messages.
 */
export type SourceErrorCode =
  | 'unsupported_source'
  | 'invalid_source_url'
  | 'source_unreachable'
  | 'source_auth_failed'
  | 'source_database_not_found'
  | 'source_connection_lost'
  | 'source_query_failed'
  | 'source_value_invalid'
  | 'snapshot_closed'
  | 'snapshot_busy'
  | 'invalid_read_request'
  | 'position_expired'
  | 'replication_not_ready'
  | 'replication_failed';

/**
 * Base class of every connector error. Messages are safe to show to users and to log: they never
 * carry a password, a driver's stack or SQL text. Details live in structured fields.
 */
export class SourceError extends Error {
  readonly code: SourceErrorCode;

  constructor(code: SourceErrorCode, message: string) {
    super(message);
    this.name = 'SourceError';
    this.code = code;
  }
}

/** A source URL or connector configuration that cannot be used. */
export class SourceConfigError extends SourceError {
  constructor(code: 'unsupported_source' | 'invalid_source_url', message: string) {
    super(code, message);
    this.name = 'SourceConfigError';
  }
}

/** Where a connector connects to: for structured error fields, never for messages. */
export interface SourceTarget {
  readonly backend: SourceBackend;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
}

/**
 * The source could not be reached, refused the credentials, has no such database, or dropped
 * the connection. The host and user are fields, not part of the message, so a message can be
 * shown to anyone.
 */
export class SourceConnectionError extends SourceError {
  readonly backend: SourceBackend;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  /** The driver's or the network's code, e.g. `ECONNREFUSED`, `ER_ACCESS_DENIED_ERROR`, `28P01`. */
  readonly driverCode: string | undefined;

  constructor(
    code:
      | 'source_unreachable'
      | 'source_auth_failed'
      | 'source_database_not_found'
      | 'source_connection_lost',
    message: string,
    target: SourceTarget,
    driverCode: string | undefined,
  ) {
    super(code, message);
    this.name = 'SourceConnectionError';
    this.backend = target.backend;
    this.host = target.host;
    this.port = target.port;
    this.database = target.database;
    this.user = target.user;
    this.driverCode = driverCode;
  }
}

/**
 * The source rejected a query, e.g. a schema config's `where` that does not parse. The server's
 * own words are in `serverMessage`, which may quote SQL, so they stay out of `message`.
 */
export class SourceQueryError extends SourceError {
  readonly driverCode: string | undefined;
  readonly serverMessage: string | undefined;

  constructor(message: string, driverCode: string | undefined, serverMessage: string | undefined) {
    super('source_query_failed', message);
    this.name = 'SourceQueryError';
    this.driverCode = driverCode;
    this.serverMessage = serverMessage;
  }
}

const AUTH_CODES = new Set([
  'ER_ACCESS_DENIED_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
  'ER_ACCESS_DENIED_NO_PASSWORD_ERROR',
  'ER_NOT_SUPPORTED_AUTH_MODE',
  'AUTH_SWITCH_PLUGIN_ERROR',
  '28P01', // invalid_password
  '28000', // invalid_authorization_specification, e.g. no such role
]);

const MISSING_DATABASE_CODES = new Set(['ER_BAD_DB_ERROR', '3D000']);

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
]);

/** Node's codes for a server certificate that `verify-full` does not accept. */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);

/** Node's code for a certificate that does not name the host (the message names both). */
const HOST_MISMATCH_CODE = 'ERR_TLS_CERT_ALTNAME_INVALID';

/**
 * OpenSSL's wording of the commonest verification failures. mysql2 replaces the code of any
 * TLS failure with HANDSHAKE_SSL_ERROR, so its message is all that tells them apart.
 */
const CERTIFICATE_MESSAGES: Readonly<Record<string, string>> = {
  'self-signed certificate in certificate chain': 'SELF_SIGNED_CERT_IN_CHAIN',
  'self-signed certificate': 'DEPTH_ZERO_SELF_SIGNED_CERT',
  'unable to verify the first certificate': 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'unable to get issuer certificate': 'UNABLE_TO_GET_ISSUER_CERT',
  'unable to get local issuer certificate': 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'certificate has expired': 'CERT_HAS_EXPIRED',
  'certificate is not yet valid': 'CERT_NOT_YET_VALID',
};

/** Database names longer than any engine allows are cut here in messages. */
const MAX_SHOWN_DATABASE = 64;

/**
 * The message of a database the source does not have, or the user may not open: it names the
 * database (the user's own input, never a host, user or password), so a typo shows.
 */
export function missingDatabaseMessage(database: string): string {
  const shown =
    database.length > MAX_SHOWN_DATABASE ? `${database.slice(0, MAX_SHOWN_DATABASE)}…` : database;
  return `The source database "${shown}" does not exist or is not accessible to this user.`;
}

/** The certificate problem behind mysql2's HANDSHAKE_SSL_ERROR, when its message tells. */
function mySqlTlsCode(message: string): string {
  if (message.startsWith('Hostname/IP does not match')) return HOST_MISMATCH_CODE;
  return CERTIFICATE_MESSAGES[message] ?? 'HANDSHAKE_SSL_ERROR';
}

/** node-postgres's wording when the server answers the SSL request with "no" (it has no code). */
const PG_NO_TLS_MESSAGE = 'The server does not support SSL connections';

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string' && error.code !== '') return error.code;
  // Node's happy-eyeballs connect reports an AggregateError whose parts carry the codes.
  if (error instanceof AggregateError) return codeOf(error.errors[0]);
  return undefined;
}

function messageOf(error: unknown): string | undefined {
  return error instanceof Error ? error.message : undefined;
}

/** PostgreSQL class 08 (connection exception) and 57P0x (server shutting down or gone). */
function isLostConnectionCode(code: string): boolean {
  return (
    code === 'ECONNRESET' ||
    code === 'EPIPE' ||
    code.startsWith('PROTOCOL_') ||
    /^08[0-9A-Z]{3}$/.test(code) ||
    code.startsWith('57P0')
  );
}

/**
 * Turns whatever a driver threw into a `SourceError` with a safe message. `action` completes
 * "The source database rejected the query …", e.g. `reading table "orders"`.
 */
export function sourceErrorFrom(error: unknown, target: SourceTarget, action: string): SourceError {
  if (error instanceof SourceError) return error;
  const message = messageOf(error) ?? '';
  let code = codeOf(error);
  // node-postgres reports these without a code; its wording is all there is to go on.
  if (code === undefined && message.includes('connection timeout')) code = 'ETIMEDOUT';
  if (code === undefined && message.includes('client password must be a string')) {
    code = 'NO_PASSWORD';
  }
  if (code === undefined && message.startsWith('Connection terminated')) code = 'CONNECTION_LOST';
  if (code === undefined && message === PG_NO_TLS_MESSAGE) code = 'NO_TLS';
  if (code === 'HANDSHAKE_SSL_ERROR') code = mySqlTlsCode(message);

  if (code === 'NO_TLS' || code === 'HANDSHAKE_NO_SSL_SUPPORT') {
    return new SourceConnectionError(
      'source_unreachable',
      "The source server does not offer TLS, which the connection's tlsMode requires.",
      target,
      code,
    );
  }
  if (code !== undefined && CERTIFICATE_CODES.has(code)) {
    return new SourceConnectionError(
      'source_unreachable',
      `The source server's TLS certificate is not trusted (${code}); tlsMode verify-full needs a certificate signed by a trusted CA.`,
      target,
      code,
    );
  }
  if (code === HOST_MISMATCH_CODE) {
    return new SourceConnectionError(
      'source_unreachable',
      `The source server's TLS certificate does not carry the server's host name (${code}).`,
      target,
      code,
    );
  }
  if (code === 'HANDSHAKE_SSL_ERROR') {
    return new SourceConnectionError(
      'source_unreachable',
      `The TLS handshake with the source server failed (${code}).`,
      target,
      code,
    );
  }
  // pg_hba.conf allows the user only over TLS (a `hostssl` line), and this connection had none.
  if (code === '28000' && /no encryption/.test(message)) {
    return new SourceConnectionError(
      'source_auth_failed',
      'The source server accepts this user only over TLS; set tlsMode to require or verify-full.',
      target,
      code,
    );
  }

  if (code !== undefined && (AUTH_CODES.has(code) || code === 'NO_PASSWORD')) {
    return new SourceConnectionError(
      'source_auth_failed',
      'Authentication to the source database failed.',
      target,
      code,
    );
  }
  if (code !== undefined && MISSING_DATABASE_CODES.has(code)) {
    return new SourceConnectionError(
      'source_database_not_found',
      missingDatabaseMessage(target.database),
      target,
      code,
    );
  }
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return new SourceConnectionError(
      'source_unreachable',
      `Could not connect to the source database (${code}).`,
      target,
      code,
    );
  }
  if (code !== undefined && (code === 'CONNECTION_LOST' || isLostConnectionCode(code))) {
    return new SourceConnectionError(
      'source_connection_lost',
      `The connection to the source database was lost (${code}).`,
      target,
      code,
    );
  }
  return new SourceQueryError(
    `The source database rejected the query ${action} (${code ?? 'unknown error'}).`,
    code,
    messageOf(error),
  );
}

/**
 * The change history a stream needs to resume is gone (binlog purged, replication slot lost):
 * the caller must take a fresh snapshot. `position` is the position that could not be resumed.
 */
export class PositionExpiredError extends SourceError {
  readonly position: string;

  constructor(position: string, message: string) {
    super('position_expired', message);
    this.name = 'PositionExpiredError';
    this.position = position;
  }
}

/**
 * Change data capture cannot run: the source is not set up for it (`replication_not_ready`,
 * with the readiness issues) or the stream broke in a way a reconnect will not mend
 * (`replication_failed`). `shouldRetry` says whether reconnecting may help.
 */
export class ReplicationError extends SourceError {
  readonly issues: readonly string[];
  readonly shouldRetry: boolean;

  constructor(
    code: 'replication_not_ready' | 'replication_failed',
    message: string,
    options: { issues?: readonly string[]; shouldRetry?: boolean } = {},
  ) {
    super(code, message);
    this.name = 'ReplicationError';
    this.issues = options.issues ?? [];
    this.shouldRetry = options.shouldRetry ?? false;
  }
}
