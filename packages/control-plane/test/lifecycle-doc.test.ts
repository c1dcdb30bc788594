import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type AllowedActionsInput, allowedActions } from '../src/domain/allowed-actions.ts';
import type { Action } from '../src/domain/database-lifecycle.ts';

/** docs/control-plane/lifecycle.md's "way out" table, checked against the matrix. */
const DOC = readFileSync(
  new URL('../../../docs/control-plane/lifecycle.md', import.meta.url),
  'utf8',
);

/** The inputs each row of the table stands for. */
const CASES: Record<string, Omit<AllowedActionsInput, 'goal' | 'plan'>> = {
  draft: { status: 'draft', hasBuild: false, hasDeployment: false, replicationPaused: false },
  'running (replication active)': {
    status: 'running',
    hasBuild: true,
    hasDeployment: true,
    replicationPaused: false,
  },
  paused: { status: 'paused', hasBuild: true, hasDeployment: true, replicationPaused: false },
  'failed, first build failed': {
    status: 'failed',
    hasBuild: false,
    hasDeployment: false,
    replicationPaused: false,
  },
  'failed, first deploy failed (build succeeded)': {
    status: 'failed',
    hasBuild: true,
    hasDeployment: false,
    replicationPaused: false,
  },
  'failed redeploy (it ran before)': {
    status: 'failed',
    hasBuild: true,
    hasDeployment: true,
    replicationPaused: false,
  },
  terminated: {
    status: 'terminated',
    hasBuild: true,
    hasDeployment: true,
    replicationPaused: false,
  },
};

function wayOutTable(): { actions: Action[]; rows: Map<string, string[]> } {
  const section = (DOC.split('### The way out of every status')[1] ?? '').split('\n');
  // The first table of the section: its lines from the first `|` to the next line without one.
  const start = section.findIndex((line) => line.startsWith('|'));
  const end = section.findIndex((line, i) => i > start && !line.startsWith('|'));
  const lines = section.slice(start, end);
  const cells = (line: string) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
  const [header, , ...body] = lines;
  const actions = cells(header ?? '').slice(1) as Action[];
  return {
    actions,
    rows: new Map(body.map((line) => [cells(line)[0] ?? '', cells(line).slice(1)])),
  };
}

describe('docs/control-plane/lifecycle.md', () => {
  const { actions, rows } = wayOutTable();

  it('has a row for every case', () => {
    expect([...rows.keys()]).toEqual(Object.keys(CASES));
    expect(actions).toHaveLength(12);
  });

  it.each(Object.entries(CASES))('says what the code does for %s', (name, input) => {
    const matrix = allowedActions({ ...input, goal: null, plan: 'pro' });
    const documented = rows.get(name) ?? [];
    actions.forEach((action, i) => {
      const entry = matrix[action];
      const cell = entry.allowed
        ? '✓'
        : / already: there is nothing to [a-z-]+\.$/.test(entry.reason ?? '')
          ? '—'
          : (entry.reason?.match(/: use (.+) instead\.$/)?.[1] ?? '?');
      expect(documented[i], `${name}: ${action}`).toBe(cell);
    });
  });
});
