import { describe, expect, it } from 'vitest';
import {
  docExamples,
  extractExamples,
  outputMatches,
  printsInOrder,
  queriesOf,
  shownOutputs,
  splitConsole,
} from './docs-examples.ts';
import { ROOT } from './replix-start.ts';

const doc = [
  '# A doc',
  '',
  '```sh',
  'echo one',
  '```',
  '',
  '```json',
  '{"not": "run"}',
  '```',
  '',
  '1. In a list:',
  '   ```bash',
  '   echo two',
  '   ```',
  '',
  '````sh no-run: needs SQL Server',
  'sqlcmd -Q "SELECT 1"',
  '```',
  'still inside',
  '````',
  '',
  '```query',
  'customers { id }',
  '',
  'orders (status = ',
  "  'paid') { id }",
  '```',
  '',
  '```',
  'a plain block: not run',
  '```',
].join('\n');

describe('extracting the examples of a doc', () => {
  it('takes shell and query fences with their lines, and leaves every other language', () => {
    const examples = extractExamples('docs/a.md', doc);
    expect(examples.map(({ line, kind, code, noRun }) => ({ line, kind, code, noRun }))).toEqual([
      { line: 3, kind: 'shell', code: 'echo one', noRun: undefined },
      { line: 12, kind: 'shell', code: 'echo two', noRun: undefined },
      {
        line: 16,
        kind: 'shell',
        code: 'sqlcmd -Q "SELECT 1"\n```\nstill inside',
        noRun: 'needs SQL Server',
      },
      {
        line: 22,
        kind: 'query',
        code: "customers { id }\n\norders (status = \n  'paid') { id }",
        noRun: undefined,
      },
    ]);
  });

  it('refuses a fence with a marker other than no-run, or no-run without a reason', () => {
    expect(() => extractExamples('docs/b.md', '```sh ignore\nls\n```')).toThrow(
      /docs\/b\.md:1: .*no-run: <reason>/,
    );
    expect(() => extractExamples('docs/b.md', 'text\n```sh no-run:\nls\n```')).toThrow(
      /docs\/b\.md:2/,
    );
  });

  it('splits a query block at blank lines', () => {
    expect(queriesOf("customers { id }\n\norders (status = \n  'paid') { id }\n")).toEqual([
      'customers { id }',
      "orders (status = \n  'paid') { id }",
    ]);
  });

  it('splits a console block into its $ commands and their output', () => {
    expect(splitConsole('$ echo a \\\n  b\na b\n$ echo c\nc')).toEqual({
      commands: 'echo a \\\n  b\necho c',
      output: 'a b\nc',
    });
  });

  it('takes a text block right after a shell block as its output', () => {
    const [shown, alone] = extractExamples(
      'docs/c.md',
      '```sh\nreplix db show demo\n```\n\n```text\nname: demo\n```\n\n```sh\nls\n```\nthen\n```text\nnot its output\n```',
    );
    expect(shown?.output).toBe('name: demo');
    expect(alone?.output).toBeUndefined();
  });

  it('compares output with … for anything and any run of white space as one', () => {
    expect(
      outputMatches('id  name\n 1  Ada\n2 rows · … ms', 'id name\n1 Ada\n2 rows · 0.4 ms\n'),
    ).toBe(true);
    expect(outputMatches('id  name\n 1  Ada', 'id  name\n 1  Grace')).toBe(false);
    expect(outputMatches('a (b) …', 'a (b) [c]')).toBe(true);
    expect(outputMatches('a (b)', 'a b')).toBe(false);
    const shown = 'id: 7d1c…\nfinished 2026-11-25T23:04:11.532Z at http://127.0.0.1:35423 (5b0e…)';
    expect(
      outputMatches(
        shown,
        'id: 0a9f3e2c-1d2b-4c5d-8e9f-0a1b2c3d4e5f\nfinished 2026-11-26T00:01:02Z at http://127.0.0.1:40111 (c3d4e5f6-aaaa)',
      ),
    ).toBe(true);
    expect(outputMatches(shown, 'id: 7d1c\nfinished yesterday at http://127.0.0.1:1 (5b0e)')).toBe(
      false,
    );
  });

  it('reads the output a shell line shows in its comment, and finds it in what the block printed', () => {
    const code = [
      'rx -X POST $API/x/terminate   # {"status":"terminating"}',
      'rx $API/x/redeploy -d "{}"    # {"status": "deploying", "id": "…"}: no new build',
      'BUILD=$(rx $API/x | jq -r .id)  # the latest',
      'echo "#{not a comment}"',
    ].join('\n');
    const shown = shownOutputs(code);
    expect(shown).toEqual(['{"status":"terminating"}', '{"status": "deploying", "id": "…"}']);
    const printed = '{"status":"terminating"}\n{\n  "status": "deploying",\n  "id": "9f3c"\n}\n';
    expect(printsInOrder(shown, printed)).toBe(true);
    expect(printsInOrder(shown.toReversed(), printed)).toBe(false);
    expect(printsInOrder(shown, '{"status":"terminating"}\n{"status":"running","id":"9f3c"}')).toBe(
      false,
    );
    expect(printsInOrder([], 'anything')).toBe(true);
  });

  it('finds the examples of README.md and docs/, each excluded one with its reason', () => {
    const examples = docExamples(ROOT);
    expect(examples.some((e) => e.file === 'docs/walkthrough.md' && !e.noRun)).toBe(true);
    expect(examples.some((e) => e.kind === 'query' && !e.noRun)).toBe(true);
    for (const example of examples.filter((e) => e.noRun))
      expect(example.noRun, `${example.file}:${example.line}`).toMatch(/\w{3,}/);
  });
});
