import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every file and folder of the repository, as paths relative to its root. */
function repositoryPaths(): Set<string> {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  const paths = new Set(files);
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) paths.add(`${parts.slice(0, i).join('/')}/`);
  }
  return paths;
}

// The code map names files as `name.ts` or `folder/name.ts` and folders as `folder/`; a name
// with a placeholder (`<resource>`) or a wildcard (`like-*.ts`) names a pattern, not a file.
const NAMED_PATH = /`([\w./-]+(?:\.ts|\/))`/g;

test('every file and folder ARCHITECTURE.md names exists', () => {
  const map = readFileSync(new URL('../ARCHITECTURE.md', import.meta.url), 'utf8');
  const paths = [...repositoryPaths()];
  const named = [...new Set([...map.matchAll(NAMED_PATH)].map((match) => match[1]!))];
  expect(named.length).toBeGreaterThan(40);
  const missing = named.filter(
    (name) => !paths.some((path) => path === name || path.endsWith(`/${name}`)),
  );
  expect(missing).toEqual([]);
});

test('each package depends only on packages above it in ARCHITECTURE.md', () => {
  const map = readFileSync(new URL('../ARCHITECTURE.md', import.meta.url), 'utf8');
  const order = [...map.matchAll(/^\| `([\w-]+)` \|/gm)].map((match) => match[1]!);
  expect(order).toContain('query');
  const upward = order.flatMap((name, position) => {
    const manifest = JSON.parse(
      readFileSync(new URL(`../packages/${name}/package.json`, import.meta.url), 'utf8'),
    ) as { dependencies?: Record<string, string> };
    return Object.keys(manifest.dependencies ?? {})
      .filter((dependency) => dependency.startsWith('@replix/'))
      .map((dependency) => dependency.slice('@replix/'.length))
      .filter((dependency) => !order.slice(0, position).includes(dependency))
      .map((dependency) => `${name} -> ${dependency}`);
  });
  expect(upward).toEqual([]);
});
