import { describe, expect, it } from 'vitest';
import {
  SourceConnectionError,
  SourceError,
  SourceQueryError,
  type SourceTarget,
  sourceErrorFrom,
} from '../src/errors.ts';

const target: SourceTarget = {
  backend: 'mysql',
  host: 'db.internal',
  port: 3306,
  database: 'shop',
  user: 'app',
};

function driverError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('sourceErrorFrom', () => {
  it('reports unreachable servers with the network code and no host in the message', () => {
    const error = sourceErrorFrom(
      driverError('connect ECONNREFUSED 10.0.0.5:3306', 'ECONNREFUSED'),
      target,
      'x',
    );
    expect(error).toBeInstanceOf(SourceConnectionError);
    expect(error.code).toBe('source_unreachable');
    expect(error.message).toBe('Could not connect to the source database (ECONNREFUSED).');
    expect(error).toMatchObject({ host: 'db.internal', port: 3306, driverCode: 'ECONNREFUSED' });
  });

  it('names TLS failures without quoting host names, whichever driver reports them', () => {
    const cases: [Error, string][] = [
      [driverError('The server does not support SSL connections'), 'does not offer TLS'],
      [
        driverError('Server does not support secure connection', 'HANDSHAKE_NO_SSL_SUPPORT'),
        'does not offer TLS',
      ],
      [
        driverError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN'),
        'is not trusted (SELF_SIGNED_CERT_IN_CHAIN)',
      ],
      // mysql2 replaces the code of every TLS failure; the message still tells.
      [
        driverError('unable to verify the first certificate', 'HANDSHAKE_SSL_ERROR'),
        'is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
      ],
      [
        driverError(
          "Hostname/IP does not match certificate's altnames: Host: db.internal. is not in the cert's altnames: DNS:x",
          'HANDSHAKE_SSL_ERROR',
        ),
        "does not carry the server's host name (ERR_TLS_CERT_ALTNAME_INVALID)",
      ],
      [
        driverError(
          'no pg_hba.conf entry for host "10.0.0.5", user "app", database "shop", no encryption',
          '28000',
        ),
        'only over TLS',
      ],
    ];
    for (const [driver, expected] of cases) {
      const error = sourceErrorFrom(driver, target, 'x');
      expect(error, driver.message).toBeInstanceOf(SourceConnectionError);
      expect(error.message).toContain(expected);
      expect(error.message).not.toMatch(/db\.internal|10\.0\.0\.5/);
    }
  });

  it('takes the code from the first part of an AggregateError', () => {
    const aggregate = new AggregateError([driverError('a', 'ECONNREFUSED')], 'all failed');
    expect(sourceErrorFrom(aggregate, target, 'x').code).toBe('source_unreachable');
  });

  it('reports rejected credentials of both engines alike', () => {
    for (const error of [
      driverError(
        "Access denied for user 'app'@'h' (using password: YES)",
        'ER_ACCESS_DENIED_ERROR',
      ),
      driverError('password authentication failed for user "app"', '28P01'),
      driverError('role "app" does not exist', '28000'),
      driverError('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string'),
    ]) {
      const mapped = sourceErrorFrom(error, target, 'x');
      expect(mapped.code).toBe('source_auth_failed');
      expect(mapped.message).toBe('Authentication to the source database failed.');
    }
  });

  it('tells a missing database and a lost connection apart', () => {
    expect(sourceErrorFrom(driverError('no db', 'ER_BAD_DB_ERROR'), target, 'x')).toMatchObject({
      code: 'source_database_not_found',
      message: 'The source database "shop" does not exist or is not accessible to this user.',
    });
    expect(sourceErrorFrom(driverError('no db', '3D000'), target, 'x').code).toBe(
      'source_database_not_found',
    );
    expect(sourceErrorFrom(driverError('gone', 'PROTOCOL_CONNECTION_LOST'), target, 'x').code).toBe(
      'source_connection_lost',
    );
    expect(
      sourceErrorFrom(driverError('Connection terminated unexpectedly'), target, 'x').code,
    ).toBe('source_connection_lost');
    expect(sourceErrorFrom(driverError('terminating', '57P01'), target, 'x').code).toBe(
      'source_connection_lost',
    );
  });

  it('keeps the server message of a rejected query out of the message', () => {
    const error = sourceErrorFrom(
      driverError("You have an error in your SQL syntax near 'WHERE (x'", 'ER_PARSE_ERROR'),
      target,
      'reading table "t"',
    );
    expect(error).toBeInstanceOf(SourceQueryError);
    expect(error.message).toBe(
      'The source database rejected the query reading table "t" (ER_PARSE_ERROR).',
    );
    expect((error as SourceQueryError).serverMessage).toContain('WHERE (x');
  });

  it('passes SourceErrors through unchanged', () => {
    const original = new SourceError('snapshot_closed', 'closed');
    expect(sourceErrorFrom(original, target, 'x')).toBe(original);
  });
});
