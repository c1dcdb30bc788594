import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { instanceBundle } from '../src/application/builder/instance-bundle.ts';

describe('the bundled instance program', () => {
  const root = mkdtempSync(join(tmpdir(), 'replix-bundle-cache-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is bundled once for every data folder that shares a cache folder (REPLIX_BUNDLE_CACHE_DIR)', async () => {
    const shared = join(root, 'shared');
    const first = await instanceBundle(join(root, 'data-a'), shared);
    expect(first.cacheHit).toBe(false);
    expect(first.path.startsWith(`${shared}/`)).toBe(true);
    expect(statSync(shared).mode & 0o777).toBe(0o700);
    const second = await instanceBundle(join(root, 'data-b'), shared);
    expect(second).toEqual({ path: first.path, cacheHit: true });
  }, 120_000);
});
