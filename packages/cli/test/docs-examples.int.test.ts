import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DocExample,
  docExamples,
  outputMatches,
  printsInOrder,
  queriesOf,
  shownOutputs,
  splitConsole,
} from './docs-examples.ts';
import { ROOT, type StartedReplix, startEnvironment, startReplix } from './replix-start.ts';

// Every shell and query example of README.md and docs/ runs here against one `replix start`
// with its demo, as CONTRIBUTING.md ("Examples in the docs run") describes.

const run = promisify(execFile);
const BIN = join(ROOT, 'packages/cli/bin/replix.js');
const examples = docExamples(ROOT);
const byFile = Map.groupBy(examples, (example) => example.file);

// Names bash defines itself: not part of the state one block hands to the next.
const BASH_OWN = new Set(
  execFileSync('bash', ['--norc', '-c', 'compgen -v'], { env: {}, encoding: 'utf8' }).split('\n'),
);

let running: StartedReplix;
let env: NodeJS.ProcessEnv;
let stateDir: string;
let demoKey: string;

function bannerField(banner: string, label: string): string {
  const line = banner.split('\n').find((l) => l.trimStart().startsWith(label));
  const value = line?.trim().slice(label.length).trim().split(/\s+/)[0];
  if (!value) throw new Error(`no "${label}" in the banner:\n${banner}`);
  return value;
}

beforeAll(async () => {
  env = await startEnvironment();
  running = await startReplix(env);
  stateDir = mkdtempSync(join(tmpdir(), 'replix-docs-examples-'));
  demoKey = bannerField(running.banner, 'API key');
  const token = execFileSync(process.execPath, [BIN, 'token', '--email', 'you@example.com'], {
    env,
    encoding: 'utf8',
  }).trim();
  // What a reader has after `npm start` and the walkthrough's first step.
  env = {
    ...env,
    PATH: `${join(ROOT, 'packages/cli/bin')}:${env.PATH}`,
    INSTANCE: bannerField(running.banner, 'demo instance'),
    TOKEN: token,
    REPLIX_LOG_LEVEL: undefined,
  };
}, 180_000);

afterAll(async () => {
  await running?.stop();
  if (env?.REPLIX_DATA_DIR) rmSync(env.REPLIX_DATA_DIR, { recursive: true, force: true });
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** The example's text as it runs here: the test's ports and the demo's key in place of the doc's. */
function localised(code: string): string {
  return code
    .replaceAll('127.0.0.1:4000', `127.0.0.1:${env.REPLIX_API_PORT}`)
    .replace(/\b15432\b/g, env.REPLIX_DEMO_PORT as string)
    .replaceAll('rxk_…', demoKey);
}

/** Runs shell text in bash with the state the doc's earlier blocks left, and saves the new state. */
async function runShell(example: DocExample, code: string): Promise<string> {
  const state = join(stateDir, example.file.replaceAll('/', '_'));
  const script = join(stateDir, 'block.sh');
  writeFileSync(
    script,
    [
      `[ -f '${state}' ] && source '${state}'`,
      'shopt -s expand_aliases',
      'set -euo pipefail',
      localised(code),
      'set +eu',
      `{ for __name in $(compgen -v); do`,
      `    case " ${[...BASH_OWN].join(' ')} " in *" $__name "*) ;; *) [[ $__name == __* ]] || declare -p "$__name";; esac`,
      `  done; declare -f; alias -p; } > '${state}'`,
      '',
    ].join('\n'),
  );
  const { stdout } = await run('bash', [script], {
    env,
    cwd: ROOT,
    timeout: 150_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(`${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  return stdout;
}

const API_ERROR = /"error"\s*:\s*\{\s*"code"/;

async function runExample(example: DocExample): Promise<void> {
  if (example.kind === 'query') {
    // Straight to the instance's /query: one request each, no process to start.
    for (const query of queriesOf(example.code)) {
      const response = await fetch(`${env.INSTANCE}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demoKey}` },
        body: query,
      });
      const body = await response.text();
      expect(response.status, `${query}\n${body}`).toBe(200);
      expect(JSON.parse(body), query).toHaveProperty('data');
    }
    return;
  }
  if (example.kind === 'console') {
    const { commands, output } = splitConsole(example.code);
    const stdout = await runShell(example, commands);
    expect(outputMatches(output, stdout), `printed:\n${stdout}\nthe doc shows:\n${output}`).toBe(
      true,
    );
    return;
  }
  const stdout = await runShell(example, example.code);
  expect(stdout, 'an API error').not.toMatch(API_ERROR);
  if (example.output !== undefined) {
    expect(
      outputMatches(example.output, stdout),
      `printed:\n${stdout}\nthe doc shows:\n${example.output}`,
    ).toBe(true);
  }
  const shown = shownOutputs(example.code);
  expect(
    printsInOrder(shown, stdout),
    `printed:\n${stdout}\nthe doc shows:\n${shown.join('\n')}`,
  ).toBe(true);
}

describe('the examples in README.md and docs/ run against replix start and its demo', () => {
  for (const [file, fileExamples] of byFile) {
    describe(file, () => {
      for (const example of fileExamples) {
        const name = `${example.file}:${example.line} (${example.kind})`;
        if (example.noRun) it.skip(`${name}: no-run: ${example.noRun}`, () => {});
        else it(name, { timeout: 180_000 }, () => runExample(example));
      }
    });
  }
});
