import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testPostgres } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestInstance, type TestInstance } from '../../instance/test/instance-helpers.ts';
import { README_DATABASE_SQL, readmeExamples } from './readme-fixture.ts';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const README = 'packages/sdk/README.md';

function run(file: string, env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [file],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

const EXAMPLES = readmeExamples(readFileSync(join(packageDir, 'README.md'), 'utf8'));

describe(`${README} examples`, () => {
  let served: TestInstance;
  // The examples import '@replix/sdk' as an app would: from a node_modules beside them.
  const work = mkdtempSync(join(tmpdir(), 'replix-sdk-readme-'));

  beforeAll(async () => {
    const db = await testPostgres().createDatabase(README_DATABASE_SQL);
    served = await startTestInstance(db.url);
    mkdirSync(join(work, 'node_modules', '@replix'), { recursive: true });
    symlinkSync(packageDir, join(work, 'node_modules', '@replix', 'sdk'));
    writeFileSync(join(work, 'package.json'), '{ "type": "module" }\n');
  });
  afterAll(async () => {
    await served?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('has the five-line example first, and every example shows its output', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(3);
    expect(EXAMPLES[0]!.code.trim().split('\n').filter(Boolean)).toHaveLength(5);
    for (const example of EXAMPLES) expect(example.output, `line ${example.line}`).toBeDefined();
  });

  for (const example of EXAMPLES) {
    it(`${README}:${example.line} prints what the README shows`, async () => {
      const file = join(work, `example-${example.line}.ts`);
      writeFileSync(file, example.code);
      const result = await run(file, { REPLIX_URL: served.url, REPLIX_API_KEY: served.key });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(example.output);
    });
  }
});
