import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  errorForLog,
  LOGGED_FRAMES,
  serviceLogger,
  unexpectedErrorForLog,
} from '../src/service-logger.ts';

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

/** The installation's root on this machine, as the logger finds it. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

class CodedError extends Error {
  readonly code = 'source_auth_failed';
  constructor(message: string) {
    super(message);
    this.name = 'CodedError';
  }
}

describe('serviceLogger', () => {
  // Expected errors (every 4xx, a refusing source) keep no stack: their message and code say it.
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

  it('keeps the first frames of an unexpected error, every path relative to the installation', () => {
    const error = new CodedError('Cannot read properties of undefined');
    error.stack = [
      'CodedError: Cannot read properties of undefined',
      `    at planDeploy (file://${ROOT}packages/control-plane/src/application/reconciler/deploy.ts:42:7)`,
      `    at ${ROOT}packages/runtime/src/service-logger.ts?v=3:10:3`,
      '    at Object.handler (/srv/build-host/app/node_modules/fastify/lib/handle-request.js:8:9)',
      '    at elsewhere (/home/alice/work/host-name.internal/tool.js:1:1)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
      '    at async Promise.all (index 0)',
      ...Array.from({ length: 10 }, (_, i) => `    at more${i} (${ROOT}x.ts:${i}:1)`),
    ].join('\n');
    const logged = unexpectedErrorForLog(error) as { frames: string[] };
    expect(logged).toMatchObject({
      type: 'CodedError',
      message: 'Cannot read properties of undefined',
      code: 'source_auth_failed',
    });
    expect(logged.frames).toHaveLength(LOGGED_FRAMES);
    expect(logged.frames.slice(0, 7)).toEqual([
      'at planDeploy (packages/control-plane/src/application/reconciler/deploy.ts:42:7)',
      'at packages/runtime/src/service-logger.ts:10:3',
      'at Object.handler (node_modules/fastify/lib/handle-request.js:8:9)',
      'at elsewhere (tool.js:1:1)',
      'at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
      'at async Promise.all (index 0)',
      'at more0 (x.ts:0:1)',
    ]);
    const text = JSON.stringify(logged);
    for (const leak of [ROOT, 'file://', '/srv/', 'build-host', '/home/', 'alice']) {
      expect(text).not.toContain(leak);
    }
  });

  it('gives the frames of a real throw as paths under the installation', () => {
    let thrown: unknown;
    try {
      JSON.parse('{');
    } catch (error) {
      thrown = error;
    }
    const { frames } = unexpectedErrorForLog(thrown) as { frames: string[] };
    expect(
      frames.some((frame) => frame.includes('packages/runtime/test/service-logger.test.ts:')),
    ).toBe(true);
    expect(frames.join('\n')).not.toContain(ROOT);
  });
});
