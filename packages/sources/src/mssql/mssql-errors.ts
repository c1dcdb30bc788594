import {
  missingDatabaseMessage,
  SourceConnectionError,
  SourceError,
  SourceQueryError,
  type SourceTarget,
} from '../errors.ts';

/**
 * Turns whatever mssql / tedious threw into a `SourceError` with a safe message. The shared
 * `sourceErrorFrom` knows MySQL and PostgreSQL codes; SQL Server reports through mssql's own
 * codes (`ELOGIN`, `ESOCKET`, `ETIMEOUT`, `EREQUEST`) and SQL Server error numbers instead, and
 * its login failures differ only in wording. Server messages name users and databases, so they
 * stay in `SourceQueryError.serverMessage`, never in `message`.
 */

const UNREACHABLE_CAUSES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
]);

function field(value: unknown, name: string): unknown {
  return typeof value === 'object' && value !== null && name in value
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The network error underneath mssql's wrapper and tedious' own (`originalError`, `cause`).
 * tedious tries each address of the host in turn and reports an AggregateError of the attempts.
 */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined; depth++) {
    const code = text(field(current, 'code'));
    if (code !== undefined && UNREACHABLE_CAUSES.has(code)) return code;
    if (code === 'ECONNRESET' || code === 'EPIPE') return code;
    current =
      current instanceof AggregateError
        ? current.errors[0]
        : (field(current, 'originalError') ?? field(current, 'cause'));
  }
  return undefined;
}

export function msSqlErrorFrom(error: unknown, target: SourceTarget, action: string): SourceError {
  if (error instanceof SourceError) return error;
  const code = text(field(error, 'code'));
  const message = error instanceof Error ? error.message : '';
  const isConnectionError = error instanceof Error && error.name === 'ConnectionError';

  if (code === 'ELOGIN') {
    // Error 4060 "Cannot open database … requested by the login": no such database, or no user
    // for the login in it. Every other login failure (18456 and kin) is about credentials.
    if (message.includes('Cannot open database')) {
      return new SourceConnectionError(
        'source_database_not_found',
        missingDatabaseMessage(target.database),
        target,
        code,
      );
    }
    return new SourceConnectionError(
      'source_auth_failed',
      'Authentication to the source database failed.',
      target,
      code,
    );
  }
  const cause = networkCode(error);
  // tedious words socket failures while connecting "Failed to connect to …" and later ones
  // "Connection lost - …"; both carry the code ESOCKET.
  const connecting =
    code === 'EINSTLOOKUP' ||
    (code === 'ETIMEOUT' && isConnectionError) ||
    (code === 'ESOCKET' && message.startsWith('Failed to connect'));
  if (connecting) {
    const driverCode = cause ?? code;
    return new SourceConnectionError(
      'source_unreachable',
      `Could not connect to the source database (${driverCode}).`,
      target,
      driverCode,
    );
  }
  if (code === 'ESOCKET' || code === 'ECONNCLOSED' || code === 'ENOTOPEN') {
    const driverCode = cause ?? code;
    return new SourceConnectionError(
      'source_connection_lost',
      `The connection to the source database was lost (${driverCode}).`,
      target,
      driverCode,
    );
  }
  // A server error carries its number (208 invalid object, 102 syntax, 229 permission denied…).
  const number = field(error, 'number');
  const driverCode = typeof number === 'number' ? String(number) : code;
  const label =
    typeof number === 'number' ? `SQL Server error ${number}` : (code ?? 'unknown error');
  return new SourceQueryError(
    `The source database rejected the query ${action} (${label}).`,
    driverCode,
    message === '' ? undefined : message,
  );
}

/** The SQL Server error number of a failed request, if the server reported one. */
export function msSqlErrorNumber(error: unknown): number | undefined {
  const number = field(error, 'number');
  return typeof number === 'number' ? number : undefined;
}
