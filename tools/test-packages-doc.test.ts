import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

test('README.md names every Debian package tools/ensure-test-packages.sh installs', () => {
  const script = read('tools/ensure-test-packages.sh');
  const named = [...script.matchAll(/missing\+=\(([\w-]+)\)/g)].map((match) => match[1]!);
  const tools = script.match(/for tool in ([\w ]+);/)?.[1]?.split(' ') ?? [];
  const packages = [...named, ...tools];
  expect(packages).toEqual(
    expect.arrayContaining(['mariadb-server', 'postgresql', 'openssh-server', 'chromium']),
  );
  const readme = read('README.md');
  expect(packages.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
});

test('.ci/run and npm test share the one install step', () => {
  expect(read('.ci/run')).toContain('bash tools/ensure-test-packages.sh');
  const manifest = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  expect(manifest.scripts.pretest).toBe('bash tools/ensure-test-packages.sh');
});
