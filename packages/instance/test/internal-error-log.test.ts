import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { compileSchema, parseSchemaConfig } from '@replix/engine';
import { newKeyId, newKeySecret } from '@replix/instance-protocol';
import { serviceLogger } from '@replix/runtime/logger';
import { expect, it } from 'vitest';
import { ApiKeyVerifier, buildInstanceServer } from '../src/index.ts';
import type { ServedState } from '../src/threads/served-state.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** A served state that fails as a bug would once serving: its health throws a TypeError. */
const broken = {
  schema: compileSchema({ tables: [] }, parseSchemaConfig({})),
  queryWorkingBytes: () => 1 << 20,
  countQueryMemory() {},
  countClientMemory() {},
  health() {
    throw new TypeError('health read a field of undefined in a broken build');
  },
} as unknown as ServedState;

it("logs an unexpected failure's frames relative to the installation, answers the envelope alone", async () => {
  const lines: string[] = [];
  const log = serviceLogger(
    'replix-instance',
    'info',
    new Writable({
      write(chunk, _encoding, callback) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        callback();
      },
    }),
  );
  const app = await buildInstanceServer({
    controller: broken,
    keys: new ApiKeyVerifier(newKeySecret(), [newKeyId()]),
    version: '0.1.0-test',
    maxBodyBytes: 1024,
    sync: { pause() {}, resume() {}, paused: false },
    log,
  });
  try {
    const answer = await app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'probe-7' },
    });
    expect(answer.statusCode).toBe(500);
    expect(answer.json()).toEqual({
      error: {
        code: 'internal_error',
        message: 'Internal error. The request id in the logs identifies it.',
      },
    });
    expect(answer.body).not.toContain('.ts');
    const failed = lines.map((line) => JSON.parse(line)).find((r) => r.msg === 'request failed');
    expect(failed).toMatchObject({ reqId: 'probe-7', err: { type: 'TypeError' } });
    expect(failed.err.frames[0]).toMatch(/packages\/instance\/test\/internal-error-log\.test\.ts:/);
    expect(lines.join('\n')).not.toContain(ROOT);
    // An id that is not short and plain is not taken into the log.
    await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'a"b c' } });
    const second = lines.map((line) => JSON.parse(line)).filter((r) => r.msg === 'request failed');
    expect(second[1]?.reqId).toMatch(/^req-/);
  } finally {
    await app.close();
  }
});
