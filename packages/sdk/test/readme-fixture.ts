/** What the SDK README's examples run against, and how they are read from it. */

/** The MariaDB tables the README's examples query (`customers`, and `accounts` for exact numbers). */
export const README_DATABASE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, country CHAR(2))
    DEFAULT CHARSET = utf8mb4;
  INSERT INTO customers VALUES (1, 'Ada', 'GB'), (2, 'Björk', 'IS'), (3, 'Grace', 'US'),
    (4, 'Sigur Rós', 'IS'), (5, 'Alan', 'GB');
  CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance DECIMAL(30,4) NOT NULL);
  INSERT INTO accounts VALUES (9007199254740993, 1234567890123456.7891);
`;

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
