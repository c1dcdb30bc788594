import { describe, expect, it } from 'vitest';
import {
  SourceConnectionError,
  SourceError,
  SourceQueryError,
  type SourceTarget,
  sourceErrorFrom,
} from '../src/errors.ts';

const target: SourceTarget = {
  engine: 'mysql',
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
    expect(sourceErrorFrom(driverError('no db', 'ER_BAD_DB_ERROR'), target, 'x').code).toBe(
      'source_database_not_found',
    );
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
