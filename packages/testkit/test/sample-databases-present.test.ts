import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleDatabasesPresent } from '../src/realdb/sample-files.ts';

describe('sampleDatabasesPresent', () => {
  const dir = mkdtempSync(join(tmpdir(), 'replix-samples-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a suite when the samples folder is there, saying nothing', () => {
    const said: string[] = [];
    expect(sampleDatabasesPresent('Sakila', dir, (line) => said.push(line))).toBe(true);
    expect(said).toEqual([]);
  });

  it('skips it without the folder, in one line naming the suite and how to run it', () => {
    const said: string[] = [];
    const missing = join(dir, 'realdb-samples');
    expect(sampleDatabasesPresent('Sakila on MariaDB', missing, (line) => said.push(line))).toBe(
      false,
    );
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^not run: Sakila on MariaDB: .*\.\.\/shared\/realdb-samples\//);
    expect(said[0]).toContain('run npm test again');
  });
});
