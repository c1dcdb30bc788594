import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// The control plane's layers, as ARCHITECTURE.md's table "Its layers" gives them: a file imports
// values only from its own layer and the ones below (type-only imports are free).

const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const MAP = readFileSync(new URL('../../../ARCHITECTURE.md', import.meta.url), 'utf8');

/**
 * Imports that go up a layer and are left, each with why: none now. The list only shrinks (the
 * test fails when one of them no longer occurs, so that it is taken off).
 */
const KNOWN_UPWARD = new Map<string, string>([]);

interface Layer {
  readonly rank: number;
  readonly name: string;
  readonly patterns: readonly string[];
}

/** The rows of the table under "### Its layers". */
function layersOfMap(): Layer[] {
  const section = MAP.slice(MAP.indexOf('### Its layers'));
  const rows = [...section.matchAll(/^\| (\d) (\w+) \| ([^|]+) \|/gm)];
  return rows.map((row) => ({
    rank: Number(row[1]),
    name: row[2] as string,
    patterns: [...(row[3] as string).matchAll(/`([^`]+)`/g)].map((match) => match[1] as string),
  }));
}

/** How well `pattern` names `path`: the length of its literal text, or -1 when it does not. */
function matchLength(pattern: string, path: string): number {
  if (pattern.endsWith('/')) return path.startsWith(pattern) ? pattern.length : -1;
  if (pattern.includes('*')) {
    const [prefix, suffix] = pattern.split('*') as [string, string];
    const fits = path.startsWith(prefix) && path.endsWith(suffix);
    return fits ? prefix.length + suffix.length : -1;
  }
  return path === pattern ? pattern.length : -1;
}

function layerOf(layers: readonly Layer[], path: string): Layer | undefined {
  let best: { layer: Layer; length: number } | undefined;
  for (const layer of layers) {
    for (const pattern of layer.patterns) {
      const length = matchLength(pattern, path);
      if (length > (best?.length ?? -1)) best = { layer, length };
    }
  }
  return best?.layer;
}

function sourceFiles(folder = SRC): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

/** The files `file` imports values from (`import type` and `export type` left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const statements = text.matchAll(/^(?:import|export)(\s+type)?\s[^;]*?from\s+'(\.[^']+)';/gms);
  return [...statements]
    .filter((statement) => statement[1] === undefined)
    .map((statement) => normalize(join(dirname(file), statement[2] as string)))
    .filter((target) => !target.startsWith('..'));
}

it('names a layer for every file of the control plane', () => {
  const layers = layersOfMap();
  expect(layers.map((layer) => layer.name)).toEqual([
    'domain',
    'adapters',
    'application',
    'api',
    'roles',
  ]);
  const files = sourceFiles();
  expect(files.length).toBeGreaterThan(200);
  expect(files.filter((file) => !layerOf(layers, file))).toEqual([]);
});

it('has no import that goes up a layer, but the known ones', () => {
  const layers = layersOfMap();
  const upward = sourceFiles().flatMap((file) => {
    const from = layerOf(layers, file) as Layer;
    return valueImports(file)
      .filter((target) => (layerOf(layers, target)?.rank ?? 0) > from.rank)
      .map((target) => `${file} -> ${target}`);
  });
  expect(upward.filter((edge) => !KNOWN_UPWARD.has(edge))).toEqual([]);
  expect([...KNOWN_UPWARD.keys()].filter((edge) => !upward.includes(edge))).toEqual([]);
});
