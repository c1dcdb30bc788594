import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../src/domain/database-lifecycle.ts';
import { CONTROL_PLANE_ERRORS } from '../src/domain/errors.ts';

const docsDir = new URL('../../../docs/control-plane/', import.meta.url);
const srcDir = new URL('../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * Event types built from templates. Each known template resolves to its exact values; any
 * other template must appear in the doc as a pattern (`database.<action>`) and is deliberately
 * left out of the exact comparison.
 */
const RESOLVED_TEMPLATES: Record<string, () => string[]> = {
  // database-goals.ts: the audit event of an accepted action, one per action of the matrix.
  "database.${action.replaceAll('-', '_')}": () =>
    ACTIONS.map((action) => `database.${action.replaceAll('-', '_')}`),
};

/** A literal event type: `<entity>.<verb>`, lowercase with underscores. */
const LITERAL = /'([a-z][a-z_]*\.[a-z][a-z_]*)'/g;
const TEMPLATE = /`([a-z][a-z_]*\.\$\{[^`]*\})`/g;

/**
 * Every event type the source emits to the audit log or as a notification: the string literals
 * and templates of `eventType: …` (recordAudit, notify) and of `type: …` (platform events),
 * plus the values of the FINISHED_EVENT table they index.
 */
function emittedEventTypes(): { exact: Set<string>; patterns: Set<string> } {
  const exact = new Set<string>();
  const patterns = new Set<string>();
  for (const file of sourceFiles(srcDir)) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [index, line] of lines.entries()) {
      const match = /\b(?:eventType|type)\??:\s*(.*)$/.exec(line);
      if (!match) continue;
      // An expression that starts on the next line (`eventType:\n  cond ? 'a' : 'b'`).
      const expression = match[1]?.trim() ? (match[1] as string) : (lines[index + 1] ?? '');
      if (/^\s*['`]?[a-z]+['`]?,?\s*$/.test(expression)) continue; // `type: 'http'`, …
      for (const [, value] of expression.matchAll(LITERAL)) exact.add(value as string);
      for (const [, template] of expression.matchAll(TEMPLATE)) {
        const resolve = RESOLVED_TEMPLATES[template as string];
        if (resolve) for (const value of resolve()) exact.add(value);
        else patterns.add((template as string).replace(/\$\{[^}]*\}/g, '<>'));
      }
      if (expression.includes('FINISHED_EVENT')) {
        const table = readFileSync(join(srcDir, 'domain/database-lifecycle.ts'), 'utf8');
        const body = table.slice(table.indexOf('FINISHED_EVENT'));
        const object = body.slice(0, body.indexOf('};'));
        for (const [, value] of object.matchAll(LITERAL)) exact.add(value as string);
      }
    }
  }
  return { exact, patterns };
}

describe('the control-plane error reference', () => {
  it('documents exactly the error strings of the catalogue, with status and meaning', () => {
    const doc = readFileSync(new URL('errors.md', docsDir), 'utf8');
    const section = doc.slice(doc.indexOf('## Error strings'));
    const documented = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \| (.+?) \|$/gm)].map(
      ([, status, code, meaning]) => [code, { status: Number(status), doc: meaning }],
    );
    expect(documented.length).toBeGreaterThan(0);
    expect(Object.fromEntries(documented)).toEqual(
      Object.fromEntries(
        Object.entries(CONTROL_PLANE_ERRORS).map(([code, { status, doc }]) => [
          code,
          { status, doc },
        ]),
      ),
    );
  });
});

describe('the audit and notification event reference', () => {
  const doc = readFileSync(new URL('audit-and-notifications.md', docsDir), 'utf8');
  const section = doc.slice(
    doc.indexOf('## Event types'),
    doc.indexOf('\n## ', doc.indexOf('## Event types') + 1),
  );
  const rows = [...section.matchAll(/^\| `([a-z][a-z_]*\.[a-z<>_]+)` \|/gm)].map(
    ([, type]) => type as string,
  );
  const documentedExact = rows.filter((type) => !type.includes('<'));
  const documentedPatterns = rows.filter((type) => type.includes('<'));

  it('finds the event types in the source', () => {
    const { exact } = emittedEventTypes();
    // A few that must be found, so a broken scan cannot pass by finding nothing.
    for (const type of ['api_key.created', 'notification.seen', 'management_key.revoked']) {
      expect(exact).toContain(type);
    }
  });

  it('lists every event type the code emits, and none that it does not', () => {
    const { exact } = emittedEventTypes();
    expect([...new Set(documentedExact)].sort()).toEqual([...exact].sort());
    expect(documentedExact).toHaveLength(new Set(documentedExact).size);
  });

  it('documents each unresolved template as a pattern', () => {
    const { patterns } = emittedEventTypes();
    const documented = documentedPatterns.map((pattern) => pattern.replace(/<[a-z_]*>/g, '<>'));
    for (const pattern of patterns) expect(documented).toContain(pattern);
  });
});
