/** The parts of a V8 CPU profile (`Profiler.stop`) the breakdown reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a sample's own frame lives, first match wins: the parts a snapshot load is made of. */
const PARTS: readonly [string, (url: string, fn: string) => boolean][] = [
  ['GC', (_url, fn) => fn === '(garbage collector)'],
  ['idle (waiting on the wire)', (_url, fn) => fn === '(idle)'],
  ['mysql2: packet parsing', (url) => url.includes('/mysql2/')],
  ['pg: row parsing', (url) => /\/(pg|pg-protocol|pg-types|postgres-array)\//.test(url)],
  ['sources: canonical conversion', (url) => url.includes('/packages/sources/')],
  [
    'engine: index building',
    (url, fn) =>
      /storage\/(key-index|key-table|row-key)\.ts/.test(url) ||
      (url.includes('storage/table-loader') && fn === 'buildIndexes'),
  ],
  [
    'engine: column building',
    (url) =>
      /storage\/(table-loader|column-builder|civil-date|comparable|bitmap|plain-number-text|exact-texts)/.test(
        url,
      ),
  ],
  ['engine: other', (url) => url.includes('/packages/engine/')],
  ['instance: loader', (url) => url.includes('/packages/instance/')],
  ['node: streams, sockets, buffers', (url) => url.startsWith('node:')],
  ['V8 builtins and runtime', (url) => url === ''],
];

/**
 * Sums a profile's sampled time by the part of the load each sample's own frame belongs to, so a
 * benchmark can say where a load's main-thread time goes.
 */
export function profileBreakdown(
  profile: CpuProfile,
): { name: string; ms: number; share: number }[] {
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    const frame = nodeById.get(id)?.callFrame;
    const url = frame?.url ?? '';
    const fn = frame?.functionName ?? '';
    const part = PARTS.find(([, matches]) => matches(url, fn))?.[0] ?? 'other';
    totals.set(part, (totals.get(part) ?? 0) + micros);
    all += micros;
  });
  return [...totals]
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: all === 0 ? 0 : micros / all }))
    .sort((a, b) => b.ms - a.ms);
}

/** The `count` functions with the most self time, as `name file:line`. */
export function topFunctions(profile: CpuProfile, count: number): { name: string; ms: number }[] {
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = nodeById.get(id)?.callFrame as
      | { functionName: string; url: string; lineNumber?: number }
      | undefined;
    const file = frame?.url.split('/').slice(-2).join('/') ?? '';
    const key = `${frame?.functionName || '(anonymous)'} ${file}:${(frame?.lineNumber ?? 0) + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return [...totals]
    .map(([name, micros]) => ({ name, ms: micros / 1000 }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
}
