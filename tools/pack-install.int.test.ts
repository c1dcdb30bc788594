// What a user does with the packed packages (tools/pack-packages.ts): `npm run pack`, then in an
// empty folder outside the repository `npm install` of the two tarballs, then the installed
// `replix start`, `replix serve` and `replix query`, an app that imports `@replix/sdk` with its
// types, and the SDK README's examples, all from that folder.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesUnder } from '../packages/control-plane/src/adapters/drivers/process-identity.ts';
import { readmeExamples } from '../packages/sdk/test/readme-fixture.ts';
import { REPOSITORY_ROOT } from './pack-workspace.ts';

/** The repository's Node.js 24, which the installed CLI needs (the machine's may be older). */
const NODE_24 = join(REPOSITORY_ROOT, 'node_modules/.bin/node');
/** The machine's own Node.js, when it is 20: the SDK is for Node.js 20 and newer. */
const NODE_20 = '/usr/bin/node';
const TSC = join(REPOSITORY_ROOT, 'node_modules/typescript/bin/tsc');
const SDK_README = join(REPOSITORY_ROOT, 'packages/sdk/README.md');

const work = mkdtempSync(join(tmpdir(), 'replix-pack-install-'));
const app = join(work, 'app');
const children: ChildProcess[] = [];
const env = {
  PATH: `${dirname(NODE_24)}:${process.env.PATH}`,
  HOME: work,
  REPLIX_LOG_LEVEL: 'warn',
};

function run(
  node: string,
  args: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(node, args, { cwd: app, env: { ...env, ...extraEnv } }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

const replixBin = () => join(app, 'node_modules/.bin/replix');

/** Starts the installed `replix` and resolves with what it printed once `done` says so. */
function startReplix(
  args: string[],
  extraEnv: Record<string, string>,
  done: (stdout: string) => boolean,
): Promise<{ child: ChildProcess; stdout: string }> {
  const child = spawn(NODE_24, [replixBin(), ...args], {
    cwd: app,
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (done(stdout)) resolve({ child, stdout });
    });
    child.once('exit', (code) =>
      reject(new Error(`replix ${args[0]} exited with ${code}: ${stderr}`)),
    );
  });
}

function bannerField(banner: string, label: string): string {
  const line = banner.split('\n').find((l) => l.trimStart().startsWith(label));
  const value = line?.trim().slice(label.length).trim().split(/\s+/)[0];
  if (!value) throw new Error(`no "${label}" in the banner:\n${banner}`);
  return value;
}

/** The MariaDB database `replix serve` serves here: the app's and `replix query`'s rows. */
const SERVED_DATABASE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, country CHAR(2))
    DEFAULT CHARSET = utf8mb4;
  INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Björk', 'IS'), (3, 'Grace', 'US'),
    (4, 'Sigur Rós', 'IS'), (5, 'Alan', 'GB');
`;

const SDK_EXAMPLES = readmeExamples(readFileSync(SDK_README, 'utf8'));

const APP = `import { ReplixClient, rql } from '@replix/sdk';

const [url, key] = process.argv.slice(2);
const replix = new ReplixClient({ url: url!, key });
const { data } = await replix.query<{ id: number; name: string }>(
  rql\`customers (country = \${'GB'}) { id name } ORDER BY id\`,
);
const first: number = data[0]!.id;
console.log(JSON.stringify({ first, names: data.map((row) => row.name) }));
`;

describe('the packed packages, installed in an empty folder', () => {
  let tarballs: string[];

  beforeAll(() => {
    // As `npm run pack` does, into a folder of this test's own.
    const out = join(work, 'tarballs');
    tarballs = execFileSync(
      NODE_24,
      [join(REPOSITORY_ROOT, 'tools/pack-packages.ts'), '--out', out],
      {
        cwd: REPOSITORY_ROOT,
        encoding: 'utf8',
      },
    )
      .trim()
      .split('\n');
    execFileSync('mkdir', ['-p', app]);
    writeFileSync(
      join(app, 'package.json'),
      '{ "name": "an-app", "private": true, "type": "module" }\n',
    );
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
      cwd: app,
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
  }, 300_000);

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    // Instances a control plane left behind (a failed test): started under its data folder.
    for (const pid of processesUnder(work)) process.kill(pid, 'SIGKILL');
    await rm(work, { recursive: true, force: true });
  }, 120_000);

  it('installs the SDK without dependencies and the CLI with registry packages only', () => {
    const sdk = JSON.parse(
      readFileSync(join(app, 'node_modules/@replix/sdk/package.json'), 'utf8'),
    );
    expect(sdk.dependencies).toBeUndefined();
    expect(sdk.private).toBeUndefined();
    expect(existsSync(join(app, 'node_modules/@replix/sdk/dist/index.d.ts'))).toBe(true);
    const cli = JSON.parse(
      readFileSync(join(app, 'node_modules/@replix/cli/package.json'), 'utf8'),
    );
    expect(cli.engines).toEqual({ node: '>=24' });
    // What the runtime image installs (deploy/docker/Dockerfile): JavaScript, no dev tools.
    expect(Object.keys(cli.dependencies)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^(vite|typescript|vitest|@biomejs\/.*)$/)]),
    );
    const cliDir = join(app, 'node_modules/@replix/cli');
    expect(existsSync(join(cliDir, 'packages/cli/src/main.js'))).toBe(true);
    expect(existsSync(join(cliDir, 'packages/cli/src/main.ts'))).toBe(false);
    expect(Object.keys(cli.dependencies).filter((name) => name.startsWith('@replix/'))).toEqual([]);
    // Only @replix/sdk and @replix/cli came from the tarballs: nothing internal was fetched.
    expect(readdirSync(join(app, 'node_modules/@replix')).sort()).toEqual(['cli', 'sdk']);
    // The dashboard comes built, never as sources.
    const dashboard = join(app, 'node_modules/@replix/cli/packages/dashboard');
    expect(readdirSync(dashboard)).toEqual(['dist']);
    expect(existsSync(join(dashboard, 'dist/index.html'))).toBe(true);
  });

  it('runs `replix start`: the API, the dashboard, a demo instance that `replix query` reads, and the SDK README examples against it', {
    timeout: 480_000,
  }, async () => {
    const dataDir = join(work, 'start-data');
    // Ports the system picks: a port chosen beforehand may be taken by then on a busy machine.
    const { child, stdout: banner } = await startReplix(
      ['start'],
      { REPLIX_DATA_DIR: dataDir, REPLIX_API_PORT: '0', REPLIX_DEMO_PORT: '0' },
      (stdout) => stdout.includes('Ctrl-C stops it.'),
    );
    const api = bannerField(banner, 'control plane');
    expect(api).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const openapi = await fetch(`${api}/openapi.json`);
    expect(openapi.status).toBe(200);
    expect(((await openapi.json()) as { openapi: string }).openapi).toMatch(/^3\./);
    const page = await fetch(bannerField(banner, 'dashboard'), {
      headers: { accept: 'text/html' },
    });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Replix</title>');

    // The demo instance was built by the installed builder and started by its process driver.
    const query = await run(NODE_24, [
      replixBin(),
      'query',
      bannerField(banner, 'demo instance'),
      'customers { id } ORDER BY id LIMIT 2',
      '--json',
      '--key',
      bannerField(banner, 'API key'),
    ]);
    expect(query.stderr).toBe('');
    expect((JSON.parse(query.stdout) as { data: unknown[] }).data).toEqual([{ id: 1 }, { id: 2 }]);

    // The SDK README's examples, from the installed package against the demo they are written
    // for: each prints what the README shows.
    expect(SDK_EXAMPLES.length).toBeGreaterThanOrEqual(3);
    for (const example of SDK_EXAMPLES) {
      const file = join(app, `readme-example-${example.line}.ts`);
      writeFileSync(file, example.code);
      const result = await run(NODE_24, [file], {
        REPLIX_URL: bannerField(banner, 'demo instance'),
        REPLIX_API_KEY: bannerField(banner, 'API key'),
      });
      expect(result, `packages/sdk/README.md:${example.line}`).toEqual({
        code: 0,
        stdout: example.output,
        stderr: '',
      });
    }

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(processesUnder(dataDir)).toEqual([]);
  });

  describe('against the installed `replix serve` of a MariaDB database', () => {
    let served: { url: string; apiKey: string };

    beforeAll(async () => {
      const db = await testMariaDb().createDatabase(SERVED_DATABASE_SQL);
      const { stdout } = await startReplix(['serve', '--source', db.url], {}, (out) =>
        out.includes('\n'),
      );
      served = JSON.parse(stdout.split('\n')[0] as string);
    }, 120_000);

    it('answers `replix query`', async () => {
      const query = await run(NODE_24, [
        replixBin(),
        'query',
        served.url,
        "customers (country = 'IS') { name } ORDER BY id",
        '--json',
        '--key',
        served.apiKey,
      ]);
      expect(query.stderr).toBe('');
      expect((JSON.parse(query.stdout) as { data: unknown[] }).data).toEqual([
        { name: 'Björk' },
        { name: 'Sigur Rós' },
      ]);
    });

    it('type-checks an app against the installed types, refuses a type error, and runs it', {
      timeout: 120_000,
    }, async () => {
      const tsconfig = {
        compilerOptions: {
          target: 'es2022',
          lib: ['es2022'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          types: ['node'],
          typeRoots: [join(REPOSITORY_ROOT, 'node_modules/@types')],
          outDir: 'out',
        },
        files: ['app.ts'],
      };
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
      // A row's id is a number by the query's row type: assigning it to a string must fail.
      writeFileSync(join(app, 'app.ts'), APP.replace('const first: number', 'const first: string'));
      const refused = await run(NODE_24, [TSC, '-p', 'tsconfig.json', '--noEmit']);
      expect(refused.code).not.toBe(0);
      expect(refused.stdout).toContain(
        "app.ts(8,7): error TS2322: Type 'number' is not assignable to type 'string'.",
      );
      expect(refused.stdout.match(/error TS/g)).toHaveLength(1);

      writeFileSync(join(app, 'app.ts'), APP);
      const compiled = await run(NODE_24, [TSC, '-p', 'tsconfig.json']);
      expect(compiled.stdout).toBe('');
      expect(compiled.code).toBe(0);
      const expected = `${JSON.stringify({ first: 1, names: ['Ada', 'Alan'] })}\n`;
      const on24 = await run(NODE_24, ['out/app.js', served.url, served.apiKey]);
      expect(on24).toEqual({ code: 0, stdout: expected, stderr: '' });
      // The SDK is for Node.js 20 too: the machine's own Node, where it is 20.
      if (
        existsSync(NODE_20) &&
        execFileSync(NODE_20, ['--version'], { encoding: 'utf8' }).startsWith('v20.')
      ) {
        const on20 = await run(NODE_20, ['out/app.js', served.url, served.apiKey]);
        expect(on20).toEqual({ code: 0, stdout: expected, stderr: '' });
      }
    });
  });
});
