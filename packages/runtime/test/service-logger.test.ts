import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { errorForLog, serviceLogger } from '../src/service-logger.ts';

function capture() {
  const records: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n').filter(Boolean)) records.push(JSON.parse(line));
      callback();
    },
  });
  return { records, stream };
}

class CodedError extends Error {
  readonly code = 'source_auth_failed';
  constructor(message: string) {
    super(message);
    this.name = 'CodedError';
  }
}

describe('serviceLogger', () => {
  it('logs an error by its class, message and code, without a stack trace', async () => {
    const { records, stream } = capture();
    const log = serviceLogger('replix-test', 'info', stream);
    log.warn({ err: new CodedError('Authentication failed.') }, 'instance start failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      service: 'replix-test',
      msg: 'instance start failed',
      err: { type: 'CodedError', message: 'Authentication failed.', code: 'source_auth_failed' },
    });
    expect(JSON.stringify(records[0])).not.toContain('at ');
    expect(records[0]?.err).not.toHaveProperty('stack');
  });

  it('leaves values that are not errors as they are', () => {
    expect(errorForLog('a reason')).toBe('a reason');
    expect(errorForLog(new Error('plain'))).toEqual({ type: 'Error', message: 'plain' });
  });
});
