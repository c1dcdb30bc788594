import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { expect, it } from 'vitest';

// A deploy reads as its steps: no function of it grows back into the one long state machine it
// was (266 lines). The steps are pure (domain/deploy-steps.ts); the interpreter observes and
// applies (reconciler/deploy.ts); the records end the goal (reconciler/deployment-outcomes.ts).
const DEPLOY_FILES = [
  '../src/domain/deploy-steps.ts',
  '../src/application/reconciler/deploy.ts',
  '../src/application/reconciler/deployment-outcomes.ts',
];
const MAX_LINES = 60;

/** Every function of the file with its line count, longest first. */
function functionLengths(path: string): Array<{ name: string; lines: number }> {
  const text = readFileSync(new URL(path, import.meta.url), 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; lines: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      found.push({ name: `${path}:${name}`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.sort((a, b) => b.lines - a.lines);
}

it(`has no deploy function of ${MAX_LINES} lines or more`, () => {
  const all = DEPLOY_FILES.flatMap(functionLengths);
  expect(all.length).toBeGreaterThan(20);
  expect(all.filter((fn) => fn.lines >= MAX_LINES)).toEqual([]);
});
