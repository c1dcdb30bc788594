import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'replix-cli-imports-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A preload that writes the URL of every module the process loads, one per line, at exit. */
const RECORDER = `
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.LOADED_MODULES_FILE, loaded.join('\\n')));
`;
const recorder = join(work, 'record-loads.mjs');
writeFileSync(recorder, RECORDER);

/** The modules `replix ...args` loads (it may fail: only what it loaded matters here). */
function modulesLoadedBy(...args: string[]): Promise<string[]> {
  return modulesLoadedWith({}, ...args);
}

async function modulesLoadedWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<string[]> {
  const name = [...Object.keys(env), ...args].join('-').replace(/[^a-z0-9-]/gi, '_');
  const file = join(work, `loaded-${name}.txt`);
  await run(process.execPath, ['--import', pathToFileURL(recorder).href, bin, ...args], {
    env: {
      ...process.env,
      ...env,
      LOADED_MODULES_FILE: file,
      REPLIX_API_URL: 'http://127.0.0.1:9',
    },
  }).catch(() => undefined);
  return readFileSync(file, 'utf8').split('\n');
}

/** What only running the control plane or an instance needs. */
const HEAVY = [
  '/packages/control-plane/src/index.ts',
  '/packages/instance/src/index.ts',
  '/packages/engine/src/',
  '/packages/sources/src/index.ts',
  '/node_modules/@kubernetes/client-node/',
  '/node_modules/stripe/',
  '/node_modules/fastify/',
  '/node_modules/mysql2/',
  '/node_modules/pg/',
  '/node_modules/tedious/',
  '/node_modules/mssql/',
  '/node_modules/@opentelemetry/',
];

// Each test starts a CLI process: on a loaded 2-core machine that can pass Vitest's 5 s default.
describe('what a command loads before it runs', { timeout: 30_000 }, () => {
  it.each([
    ['--help'],
    ['databases', 'list'],
    ['token', '--help'],
    ['serve', '--artifact', '/nonexistent'],
  ])('`replix %s` loads neither the control plane nor the instance program', async (...args) => {
    const loaded = await modulesLoadedBy(...args);
    expect(loaded.some((url) => url.endsWith('/packages/cli/src/main.ts'))).toBe(true);
    expect(loaded.filter((url) => HEAVY.some((part) => url.includes(part)))).toEqual([]);
  });

  it('`replix serve --source` loads the instance program when it runs one, without OpenTelemetry or SQL Server’s driver', async () => {
    const loaded = await modulesLoadedBy('serve', '--source', 'mysql://u@127.0.0.1:9/db');
    expect(loaded.some((url) => url.endsWith('/packages/instance/src/index.ts'))).toBe(true);
    // Tracing is off by default: no part of the SDK is loaded (the API is: prom-client's).
    const sdk = loaded.filter(
      (url) =>
        url.includes('/node_modules/@opentelemetry/') && !url.includes('/@opentelemetry/api/'),
    );
    expect(sdk).toEqual([]);
    // A MySQL source: mssql and tedious beneath it are loaded only for a SQL Server one.
    const sqlServer = loaded.filter((url) => /\/node_modules\/(mssql|tedious)\//.test(url));
    expect(sqlServer).toEqual([]);
  });

  it('`replix serve` loads the OpenTelemetry SDK only with tracing on', async () => {
    const loaded = await modulesLoadedWith(
      { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
      ...['serve', '--source', 'mysql://u@127.0.0.1:9/db'],
    );
    expect(loaded.some((url) => url.includes('/node_modules/@opentelemetry/sdk-trace/'))).toBe(
      true,
    );
  });
});
