/** What the SDK README's examples run against, and how they are read from it. */

/**
 * What the README's examples query: the demo shop `replix start` serves (a PostgreSQL
 * dataset), so that each prints there what the README shows.
 */
export { DEMO_DATASET_SQL as README_DATABASE_SQL } from '../../cli/src/demo/demo-dataset.ts';

export interface ReadmeExample {
  readonly line: number;
  readonly code: string;
  /** The `text` block right after it: what it prints. */
  readonly output: string | undefined;
}

/**
 * The README's ```ts blocks, each with the ```text block after it. Every one runs: the README
 * has no other use for a ts fence.
 */
export function readmeExamples(markdown: string): ReadmeExample[] {
  const fence = /^```(\w*)\n([\s\S]*?)^```\n(?:\n*```text\n([\s\S]*?)^```\n)?/gm;
  return [...markdown.matchAll(fence)]
    .filter((match) => match[1] === 'ts')
    .map((match) => ({
      line: markdown.slice(0, match.index).split('\n').length,
      code: match[2] as string,
      output: match[3],
    }));
}
