import mssql from 'mssql';
import { describe, expect, it } from 'vitest';
import { SourceConnectionError, SourceQueryError, type SourceTarget } from '../src/errors.ts';
import { msSqlErrorFrom, msSqlErrorNumber } from '../src/mssql/mssql-errors.ts';

const target: SourceTarget = {
  backend: 'mssql',
  host: 'db.internal',
  port: 1433,
  database: 'shop',
  user: 'app',
};

/** A tedious error as tedious makes them: a message, a code and maybe a cause. */
function tediousError(message: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(message, { cause }), { code });
}

/** A server error in a request, wrapped as mssql's tedious request does. */
function serverError(number: number, message: string): Error {
  const error = Object.assign(new Error(message), { info: { number, message, state: 1 } });
  return new mssql.RequestError(error, 'EREQUEST');
}

describe('msSqlErrorFrom', () => {
  it('reports failed logins as authentication failures without the server words', () => {
    const error = msSqlErrorFrom(
      new mssql.ConnectionError(tediousError("Login failed for user 'app'.", 'ELOGIN')),
      target,
      'x',
    );
    expect(error).toBeInstanceOf(SourceConnectionError);
    expect(error.code).toBe('source_auth_failed');
    expect(error.message).toBe('Authentication to the source database failed.');
    expect(error).toMatchObject({ host: 'db.internal', user: 'app', driverCode: 'ELOGIN' });
  });

  it('tells a missing database from bad credentials', () => {
    const error = msSqlErrorFrom(
      new mssql.ConnectionError(
        tediousError(
          'Cannot open database "shop" requested by the login. The login failed.',
          'ELOGIN',
        ),
      ),
      target,
      'x',
    );
    expect(error.code).toBe('source_database_not_found');
    // Named as the user gave it, not as the driver's text says it.
    expect(error.message).toBe(
      'The source database "shop" does not exist or is not accessible to this user.',
    );
  });

  it('reports a refused or unresolvable server as unreachable, with the network code', () => {
    for (const cause of ['ECONNREFUSED', 'ENOTFOUND']) {
      const error = msSqlErrorFrom(
        new mssql.ConnectionError(
          tediousError(
            `Failed to connect to db.internal:1433 - connect ${cause}`,
            'ESOCKET',
            Object.assign(new Error(cause), { code: cause }),
          ),
        ),
        target,
        'x',
      );
      expect(error.code).toBe('source_unreachable');
      expect(error.message).toBe(`Could not connect to the source database (${cause}).`);
      expect(error.message).not.toContain('db.internal');
    }
    // tedious tries each address in turn and reports the attempts as an AggregateError.
    const attempts = new AggregateError(
      [Object.assign(new Error('connect ECONNREFUSED ::1:1433'), { code: 'ECONNREFUSED' })],
      'Could not connect (sequence)',
    );
    const sequence = msSqlErrorFrom(
      new mssql.ConnectionError(
        tediousError(
          'Failed to connect to localhost:1433 - Could not connect (sequence)',
          'ESOCKET',
          attempts,
        ),
      ),
      target,
      'x',
    );
    expect(sequence).toMatchObject({ code: 'source_unreachable', driverCode: 'ECONNREFUSED' });
    const timeout = msSqlErrorFrom(
      new mssql.ConnectionError(tediousError('Failed to connect in 10000ms', 'ETIMEOUT')),
      target,
      'x',
    );
    expect(timeout.code).toBe('source_unreachable');
  });

  it('reports a connection dropped mid-request as lost', () => {
    const dropped = new mssql.RequestError(
      tediousError(
        'Connection lost - read ECONNRESET',
        'ESOCKET',
        Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      ),
      'EREQUEST',
    );
    const error = msSqlErrorFrom(dropped, target, 'x');
    expect(error.code).toBe('source_connection_lost');
    expect(error.message).toBe('The connection to the source database was lost (ECONNRESET).');
    const closed = msSqlErrorFrom(
      new mssql.ConnectionError('Connection is closed.', 'ECONNCLOSED'),
      target,
      'x',
    );
    expect(closed.code).toBe('source_connection_lost');
  });

  it('reports server errors by number, keeping their words out of the message', () => {
    const error = msSqlErrorFrom(
      serverError(208, "Invalid object name 'dbo.secret_table'."),
      target,
      'reading table "orders"',
    );
    expect(error).toBeInstanceOf(SourceQueryError);
    expect(error.message).toBe(
      'The source database rejected the query reading table "orders" (SQL Server error 208).',
    );
    expect(error).toMatchObject({
      driverCode: '208',
      serverMessage: "Invalid object name 'dbo.secret_table'.",
    });
    expect(msSqlErrorNumber(serverError(313, 'x'))).toBe(313);
    expect(msSqlErrorNumber(new Error('x'))).toBeUndefined();
  });

  it('passes connector errors through', () => {
    const original = new SourceQueryError('m', 'c', 's');
    expect(msSqlErrorFrom(original, target, 'x')).toBe(original);
  });
});
