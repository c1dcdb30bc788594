// Builds the dashboard (packages/dashboard → dist/) when it has never been built or a source
// file changed since: run by `npm ci` (prepare), `npm start` (prestart) and the browser tests,
// so the control plane always serves the current app without a build on every start.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dashboard = join(root, 'packages/dashboard');
const builtIndex = join(dashboard, 'dist/index.html');
const sources = [
  join(dashboard, 'src'),
  join(dashboard, 'index.html'),
  join(dashboard, 'vite.config.ts'),
  join(dashboard, 'package.json'),
  join(root, 'packages/client/src'),
  join(root, 'packages/query/src'),
  join(root, 'packages/sdk/src'),
];

function newestChange(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestChange(join(path, entry)));
  return newest;
}

/** True when dist/ is missing or older than any dashboard or client source. */
export function dashboardIsStale(): boolean {
  if (!existsSync(builtIndex)) return true;
  const built = statSync(builtIndex).mtimeMs;
  return sources.some((path) => existsSync(path) && newestChange(path) > built);
}

export function ensureDashboard(): void {
  if (!dashboardIsStale()) return;
  process.stderr.write('building the dashboard…\n');
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'],
    {
      cwd: dashboard,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
}

if (import.meta.main) ensureDashboard();

/** Vitest global setup: the integration and browser tests load the current dashboard. */
export function setup(): void {
  ensureDashboard();
}
