import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The packages a child Node process has loaded after `script`, as the folders under
 * node_modules of the CommonJS modules in its require cache (every driver here is CommonJS).
 */
function packagesLoadedBy(script: string): string[] {
  const program = `
    ${script}
    const { createRequire } = await import('node:module');
    const cache = createRequire(import.meta.url).cache;
    const names = Object.keys(cache).map((path) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(path)?.[1]);
    console.log(JSON.stringify([...new Set(names.filter(Boolean))].sort()));
  `;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', program], {
    cwd: new URL('..', import.meta.url),
    encoding: 'utf8',
  });
  return JSON.parse(output) as string[];
}

const DRIVERS = ['mysql2', '@vlasky/zongji', 'pg', 'pg-cursor', 'ssh2', 'mssql'];

describe('source drivers are loaded by the first source of their backend', () => {
  it('importing @replix/sources loads no driver, no SSH client and only the where grammars', () => {
    const loaded = packagesLoadedBy("await import('@replix/sources');");
    expect(loaded.filter((name) => DRIVERS.includes(name))).toEqual([]);
    // node-sql-parser's main entry holds every dialect it knows; Replix loads four of them.
    expect(loaded).toContain('node-sql-parser');
  });

  it('a MySQL probe loads mysql2 and nothing of PostgreSQL; a PostgreSQL probe the reverse', () => {
    const probe = (backend: string) => `
      const { serverProbeFor } = await import('@replix/sources');
      await serverProbeFor('${backend}')
        .probe({ host: '127.0.0.1', port: 1, user: 'u', password: 'p' })
        .catch(() => {});
    `;
    const mysql = packagesLoadedBy(probe('mysql')).filter((name) => DRIVERS.includes(name));
    expect(mysql).toEqual(['mysql2']);
    const postgres = packagesLoadedBy(probe('postgres')).filter((name) => DRIVERS.includes(name));
    expect(postgres).toEqual(['pg']);
  });
});
