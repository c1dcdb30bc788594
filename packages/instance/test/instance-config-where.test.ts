import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@replix/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveInstanceConfig } from '../src/instance-config.ts';

const folder = mkdtempSync(join(tmpdir(), 'replix-where-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function configFile(config: unknown): string {
  const path = join(folder, `${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(config));
  return path;
}

const ESCAPE = '1=1) UNION SELECT id, secret, secret FROM items WHERE (1=1';

describe('replix serve --config refuses a where that is not one safe predicate', () => {
  it.each([
    [
      'mysql://root@127.0.0.1:3306/shop',
      'tables[1].where',
      { tables: [{ name: 'a' }, { name: 'items', where: ESCAPE }] },
    ],
    [
      'postgres://u@127.0.0.1:5432/shop',
      'where',
      { where: 'id IN (SELECT id FROM other)', where_columns: ['id'] },
    ],
  ])('on %s: names %s and the position', (source, path, config) => {
    const resolve = () => resolveInstanceConfig({ source, config: configFile(config) }, {});
    expect(resolve).toThrow(ConfigError);
    expect(resolve).toThrow(
      new RegExp(`${path.replace(/[[\]]/g, '\\$&')}: .+ \\(at position \\d+\\)`),
    );
  });

  it('accepts an ordinary predicate', () => {
    const config = configFile({ tables: [{ name: 'items', where: "status = 'live' AND id > 3" }] });
    const resolved = resolveInstanceConfig({ source: 'mysql://root@127.0.0.1/shop', config }, {});
    expect(resolved.schemaConfig.tables?.[0]?.where).toBe("status = 'live' AND id > 3");
  });
});
