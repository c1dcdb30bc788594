import { readFileSync } from 'node:fs';
import { BUILD_JOB_VARIABLES, CONTROL_PLANE_VARIABLES } from '@replix/control-plane';
import { ARTIFACT_VARIABLES } from '@replix/instance';
import { environmentReference } from '@replix/runtime';
import type { TObject } from 'typebox';
import { describe, expect, it } from 'vitest';
import { CLI_VARIABLES } from '../src/cli-environment.ts';

const docsDir = new URL('../../../docs/', import.meta.url);

/** One row of a variable table: the variables it names, and its Default column's code spans. */
interface DocumentedRow {
  readonly names: readonly string[];
  readonly defaults: readonly string[] | undefined;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, text]) => text ?? '');
const cells = (line: string) =>
  line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.trim());

/** The first `| Variable |` table under `heading` in a doc. */
function variableTable(file: string, heading: string): DocumentedRow[] {
  const doc = readFileSync(new URL(file, docsDir), 'utf8');
  const section = doc.indexOf(`\n${heading}\n`);
  expect(section, `${file} has a "${heading}" section`).toBeGreaterThan(-1);
  const lines = doc.slice(section).split('\n');
  const top = lines.findIndex((line) => line.startsWith('| Variable |'));
  const defaultColumn = cells(lines[top] ?? '').indexOf('Default');
  const rows: DocumentedRow[] = [];
  for (const line of lines.slice(top + 2)) {
    if (!line.startsWith('|')) break;
    const row = cells(line);
    rows.push({
      names: codeSpans(row[0] ?? '').filter((span) => /^[A-Z][A-Z0-9_]*\*?$/.test(span)),
      defaults: defaultColumn === -1 ? undefined : codeSpans(row[defaultColumn] ?? ''),
    });
  }
  expect(rows.length, `the variable table of ${file}`).toBeGreaterThan(0);
  return rows;
}

/**
 * The documented rows name exactly the schema's variables (a `PREFIX_*` row stands for the
 * variables it matches, at least one), and each default the docs give as code, position by
 * position, is the schema's (a default made at run time, like the home folder, has none there).
 */
function expectInStep(schema: TObject, rows: readonly DocumentedRow[]): void {
  const reference = environmentReference(schema);
  const known = reference.map(({ name }) => name);
  const documented = new Set<string>();
  for (const row of rows) {
    for (const name of row.names) {
      if (name.endsWith('*')) {
        const matched = known.filter((variable) => variable.startsWith(name.slice(0, -1)));
        expect(matched, `${name} matches a variable`).not.toHaveLength(0);
        for (const variable of matched) documented.add(variable);
      } else {
        expect(known, `${name} is a variable of the schema`).toContain(name);
        documented.add(name);
      }
    }
    if (row.defaults?.length !== row.names.length) continue;
    for (const [index, name] of row.names.entries()) {
      const fallback = reference.find((variable) => variable.name === name)?.default;
      if (fallback !== undefined) expect(row.defaults[index], `${name}'s default`).toBe(fallback);
    }
  }
  expect([...documented].sort()).toEqual([...known].sort());
}

describe('the environment variable references', () => {
  it("document the control plane's variables (README, billing, webhooks and tracing)", () => {
    expectInStep(CONTROL_PLANE_VARIABLES, [
      ...variableTable('control-plane/README.md', '## Configuration'),
      ...variableTable('control-plane/billing.md', '## Configuration'),
      ...variableTable('control-plane/webhooks.md', '## Processes and settings'),
      ...variableTable('tracing.md', '## Variables'),
    ]);
  });

  it("document an instance's launch environment", () => {
    expectInStep(
      ARTIFACT_VARIABLES,
      variableTable('control-plane/builds.md', '## Instance launch environment'),
    );
  });

  it("document replix build-job's own variables", () => {
    expectInStep(BUILD_JOB_VARIABLES, variableTable('cli.md', '## Build jobs'));
  });

  it("document the replix command's own variables", () => {
    expectInStep(CLI_VARIABLES, variableTable('cli.md', '## Environment'));
  });
});
