import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@replix/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unroutedScript } from '../src/adapters/drivers/kubernetes/unrouted-backend.ts';
import { eventually } from './reconciler-fixtures.ts';

// The unrouted server's program as the pods run it: the message of the request's host, or a
// generic one; never a path from the Host header.

const dir = mkdtempSync(join(tmpdir(), 'replix-unrouted-'));
let child: ChildProcess;
let port: number;

/** A GET with any Host header (fetch would not send a hostile one). */
function get(host: string, path = '/query?q=x'): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const envelope = (message: string) => ({
  status: 503,
  body: { error: { code: 'service_unavailable', message } },
});
const GENERIC = 'The database is not serving queries right now.';

beforeAll(async () => {
  writeFileSync(
    join(dir, 'db-1.eu.db.test'),
    'The database is paused: resume it to serve queries.',
  );
  writeFileSync(join(tmpdir(), 'replix-unrouted-outside'), 'outside the folder');
  port = await freePort();
  child = spawn(
    process.execPath,
    ['--input-type=module', '-e', unroutedScript(), '127.0.0.1', String(port)],
    { env: { REPLIX_UNROUTED_DIR: dir }, stdio: 'ignore' },
  );
  await eventually(
    () =>
      get('x').then(
        () => true,
        () => false,
      ),
    10_000,
    'the unrouted server to listen',
  );
});
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
  rmSync(join(tmpdir(), 'replix-unrouted-outside'), { force: true });
});

describe('the unrouted server', () => {
  it("answers every request with 503 and the host's message, port and case aside", async () => {
    const paused = envelope('The database is paused: resume it to serve queries.');
    expect(await get('db-1.eu.db.test')).toEqual(paused);
    expect(await get('DB-1.eu.db.test:443', '/')).toEqual(paused);
    expect(await get('db-2.eu.db.test')).toEqual(envelope(GENERIC));
  });

  it('never reads a path named by the Host header', async () => {
    for (const host of [
      '..',
      '../replix-unrouted-outside',
      'a/../../replix-unrouted-outside',
      '.',
      `${'a'.repeat(300)}.test`,
      '-x.test',
      '%2e%2e',
    ]) {
      expect(await get(host), host).toEqual(envelope(GENERIC));
    }
  });
});
