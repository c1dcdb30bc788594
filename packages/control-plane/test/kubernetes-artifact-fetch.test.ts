import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactFetchScript } from '../src/adapters/drivers/kubernetes/artifact-fetch-script.ts';

const run = promisify(execFile);
const TOKEN = 'rxa_fetch-token-abcdef';
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

const program = Buffer.from('export const x = 1;\n');
const config = Buffer.from('{"tables":[]}\n');
const goodManifest = Buffer.from(
  JSON.stringify({
    buildId: 'bd_1',
    files: {
      'instance.mjs': { sha256: sha256(program), bytes: program.length },
      'schema-config.json': { sha256: sha256(config), bytes: config.length },
    },
  }),
);
/** A manifest that lists the right hash for a file the server then serves tampered. */
const tamperedFiles: Record<string, Buffer> = {
  'instance.mjs': Buffer.from('export const x = 2;\n'),
};

let server: Server;
let base: string;
const folders: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${TOKEN}`) {
      response.writeHead(401).end();
      return;
    }
    const [, build, name] = (request.url ?? '').split('/');
    const files: Record<string, Buffer> = {
      'manifest.json': goodManifest,
      'instance.mjs': program,
      'schema-config.json': config,
    };
    const body =
      build === 'tampered' ? (tamperedFiles[name ?? ''] ?? files[name ?? '']) : files[name ?? ''];
    if (!body) response.writeHead(404).end();
    else response.writeHead(200).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** Runs the init container's exact command with this Node; resolves to its exit and output. */
async function fetchArtifact(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'replix-artifact-'));
  folders.push(dir);
  const variables = {
    PATH: process.env.PATH ?? '',
    REPLIX_ARTIFACT_DIR: join(dir, 'artifact'),
    REPLIX_ARTIFACT_SHA256: sha256(goodManifest),
    REPLIX_ARTIFACT_TOKEN: TOKEN,
    REPLIX_ARTIFACT_URL: `${base}/good`,
    ...env,
  };
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--input-type=module', '-e', artifactFetchScript()],
      { env: variables },
    );
    return { code: 0, output: stdout + stderr, dir: variables.REPLIX_ARTIFACT_DIR };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return {
      code: failed.code,
      output: failed.stdout + failed.stderr,
      dir: variables.REPLIX_ARTIFACT_DIR,
    };
  }
}

describe('the artifact fetch of the init container', () => {
  it('writes every file of the manifest once their hashes check out', async () => {
    const result = await fetchArtifact({});
    expect(result.code).toBe(0);
    expect(readdirSync(result.dir).sort()).toEqual([
      'instance.mjs',
      'manifest.json',
      'schema-config.json',
    ]);
    expect(readFileSync(join(result.dir, 'instance.mjs'))).toEqual(program);
  });

  it('refuses a manifest whose hash is not the pinned one', async () => {
    const result = await fetchArtifact({ REPLIX_ARTIFACT_SHA256: '0'.repeat(64) });
    expect(result.code).toBe(1);
    expect(result.output).toContain('manifest.json: sha256 mismatch');
  });

  it('refuses a file that does not match the manifest, and writes nothing of it', async () => {
    const result = await fetchArtifact({ REPLIX_ARTIFACT_URL: `${base}/tampered` });
    expect(result.code).toBe(1);
    expect(result.output).toContain('instance.mjs: sha256 mismatch');
    expect(readdirSync(result.dir)).not.toContain('instance.mjs');
  });

  it('fails on a refused token without printing the token or the URL', async () => {
    const result = await fetchArtifact({ REPLIX_ARTIFACT_TOKEN: 'rxa_wrong-token-xyz' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('manifest.json: HTTP 401');
    expect(result.output).not.toContain('rxa_wrong-token-xyz');
    expect(result.output).not.toContain(base);
  });
});
