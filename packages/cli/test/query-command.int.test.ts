import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateTypes } from '@replix/sdk/typegen';
import { freePort } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));

/** Runs the CLI as a user would; never throws, returns the exit code and both streams. */
function replix(args: string[], env: Record<string, string> = {}) {
  const { REPLIX_API_KEY: _ignored, ...inherited } = process.env;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...inherited, ...env } },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('replix query', () => {
  let server: ChildProcess;
  let url: string;
  let apiKey: string;
  let dropDatabase: () => Promise<void>;

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40), country CHAR(2));
      CREATE TABLE orders (
        id INT PRIMARY KEY, customer_id INT NOT NULL, total DECIMAL(10,2),
        FOREIGN KEY (customer_id) REFERENCES customers (id)
      );
      INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Björk', 'IS'), (3, 'Grace', 'US');
      INSERT INTO orders VALUES (10, 1, 12.50), (11, 1, 3.00), (12, 2, 99.99);
    `);
    dropDatabase = () => db.drop();
    server = spawn(process.execPath, [bin, 'serve', '--source', db.url, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    server.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk;
    });
    const ready = await new Promise<{ url: string; apiKey: string }>((resolve, reject) => {
      createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', (line) =>
        resolve(JSON.parse(line)),
      );
      server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    url = ready.url;
    apiKey = ready.apiKey;
    // The instance listens before its snapshot is loaded; wait until it serves.
    for (let i = 0; i < 200; i++) {
      if ((await fetch(`${url}/health`)).status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await dropDatabase?.();
  });

  const query = "customers (country != 'US') { id name orders { id total } } ORDER BY id";

  it('prints the rows as an aligned table and a summary line (key from --key)', async () => {
    const result = await replix(['query', url, query, '--key', apiKey]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^id {2}name {3}orders$/);
    expect(lines[1]).toMatch(/^-+ {2}-+ {2}-+$/);
    expect(lines[2]).toBe(' 1  Ada    [{"id":10,"total":12.50},{"id":11,"total":3.00}]');
    expect(lines[3]).toBe(' 2  Björk  [{"id":12,"total":99.99}]');
    expect(lines[4]).toBe('');
    expect(lines[5]).toMatch(
      /^2 rows of 2 matched · \d+(\.\d+)? ms · snapshot swap \d+, age \d+ ms$/,
    );
  });

  it('prints the next cursor under AFTER paging (key from REPLIX_API_KEY)', async () => {
    const result = await replix(['query', url, "customers { id } LIMIT 1 AFTER ''"], {
      REPLIX_API_KEY: apiKey,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^1 row of 3 matched · .* · next cursor: \S+$/m);
  });

  it('--json prints the whole response as received, indented by two spaces', async () => {
    const result = await replix(['query', url, query, '--key', apiKey, '--json']);
    expect(result.code).toBe(0);
    const direct = await fetch(`${url}/query`, {
      method: 'POST',
      body: query,
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const expected = (await direct.json()) as { data: unknown; meta: { table: string } };
    const printed = JSON.parse(result.stdout) as typeof expected;
    expect(printed.data).toEqual(expected.data);
    expect(printed.meta.table).toBe('customers');
    expect(result.stdout).toContain('\n  "data": [\n    {\n      "id": 1,');
    // DECIMAL digits are kept as the instance wrote them.
    expect(result.stdout).toContain('"total": 12.50');
  });

  it('--get uses GET /query?q=', async () => {
    const result = await replix(['query', url, query, '--key', apiKey, '--get', '--json']);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { data: { name: string }[] };
    expect(printed.data.map((row) => row.name)).toEqual(['Ada', 'Björk']);
    const pretty = await replix(['query', url, 'customers { name } ORDER BY name DESC', '--get'], {
      REPLIX_API_KEY: apiKey,
    });
    expect(pretty.stdout.split('\n').slice(0, 5)).toEqual([
      'name',
      '-----',
      'Grace',
      'Björk',
      'Ada',
    ]);
  });

  it('prints an instance error as `replix query: <code>: <message>` and exits 1', async () => {
    const result = await replix(['query', url, 'customers { id', '--key', apiKey]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^replix query: parse_error: .+/);
    const unauthorized = await replix(['query', url, query, '--key', 'rxk_0000000000000000.x']);
    expect(unauthorized.code).toBe(1);
    expect(unauthorized.stderr).toMatch(/^replix query: unauthorized: /);
  });

  it('names --key and REPLIX_API_KEY when no key is given, and exits 2', async () => {
    const result = await replix(['query', url, query]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('--key');
    expect(result.stderr).toContain('REPLIX_API_KEY');
  });

  it('names the URL, not the key, when the instance cannot be reached, and exits 1', async () => {
    const port = await freePort();
    const result = await replix(['query', `http://127.0.0.1:${port}`, query, '--key', apiKey]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `replix query: could not reach the instance at http://127.0.0.1:${port}/query`,
    );
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).not.toContain(apiKey);
  });

  it('refuses a URL that is not http(s) with a usage error, exit 2', async () => {
    for (const bad of ['not a url', 'ftp://127.0.0.1/', 'http://user:pw@127.0.0.1:4100']) {
      const result = await replix(['query', bad, query, '--key', apiKey]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        'replix query: <instance-url> must be an http:// or https:// URL',
      );
      expect(result.stderr).not.toContain('pw');
    }
  });
});

describe('replix types', () => {
  let server: ChildProcess;
  let url: string;
  let dropDatabase: () => Promise<void>;
  const work = mkdtempSync(join(tmpdir(), 'replix-types-'));

  beforeAll(async () => {
    const db = await testMariaDb().createDatabase(`
      CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, note TEXT,
        tier ENUM('basic', 'it''s gold'));
      CREATE TABLE orders (id BIGINT PRIMARY KEY, customer_id INT, total DECIMAL(10,2),
        FOREIGN KEY (customer_id) REFERENCES customers (id));
    `);
    dropDatabase = () => db.drop();
    server = spawn(process.execPath, [bin, 'serve', '--source', db.url, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    url = await new Promise<string>((resolve) =>
      createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', (line) =>
        resolve(JSON.parse(line).url),
      ),
    );
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    await dropDatabase?.();
    rmSync(work, { recursive: true, force: true });
  });

  it('writes the types generateTypes makes of the instance /openapi.json, to stdout or --out', async () => {
    const openapi = await (await fetch(`${url}/openapi.json`)).json();
    const expected = generateTypes(openapi, { source: `${url}/openapi.json` });
    expect(expected).toContain('export interface Customers {');
    // An ENUM by its values; a MariaDB source has no array column, so no array type.
    expect(expected).toContain(`  tier: "basic" | "it's gold" | "" | null;`);
    expect(expected).not.toContain('ReplixArray');
    expect(expected).toMatch(/ {2}orders\?: Orders\[\];/);
    expect(expected).toMatch(/ {2}customer_id: number \| null;/);
    // As the SDK's client gives them by default: BIGINT bigint, DECIMAL the digits.
    expect(expected).toMatch(/ {2}id: bigint;/);
    expect(expected).toMatch(/ {2}total: string \| null;/);

    const printed = await replix(['types', url]);
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    expect(printed.stdout).toBe(expected);

    const out = join(work, 'types.ts');
    const written = await replix(['types', `${url}/`, '--out', out, '--key', 'rxk_any']);
    expect(written).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(out, 'utf8')).toBe(expected);
  });

  it('types every number a number with --numbers plain, and refuses another mode', async () => {
    const plain = await replix(['types', url, '--numbers', 'plain']);
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(plain.stdout).toMatch(/ {2}id: number;/);
    expect(plain.stdout).toMatch(/ {2}total: number \| null;/);
    const wrong = await replix(['types', url, '--numbers', 'float']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("option '--numbers <mode>' argument 'float' is invalid");
  });

  it('names the URL when the instance cannot be reached, and refuses a bad URL with exit 2', async () => {
    const port = await freePort();
    const unreachable = await replix(['types', `http://127.0.0.1:${port}`]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      `replix types: could not reach the instance at http://127.0.0.1:${port}/openapi.json`,
    );
    const bad = await replix(['types', 'ftp://127.0.0.1/']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('replix types: <instance-url> must be an http:// or https:// URL');
  });
});
