import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// Where the control plane's SQL lives (ARCHITECTURE.md, `adapters/store/`): the tables of the
// aggregates the reconciler, the builder and the API share are read and written by their
// repository modules in `adapters/store/` alone; SQL of any other table is in the adapters'
// store, jobs and events, or in a resource's own queries (`*-queries.ts`), nowhere else.

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** The aggregates' tables: `databases` (with each one's goal), `instances`, `builds`, `deployments`. */
const AGGREGATE_TABLES = ['databases', 'instances', 'builds', 'deployments'];

/** Files outside `store/` that name an aggregate's table, each with why: the list only shrinks. */
const KNOWN_AGGREGATE_READERS = new Map<string, string>([]);

/**
 * Application and API modules that hold SQL, each with why: none now. The list only shrinks
 * (the test fails when one of them no longer does).
 */
const KNOWN_SQL_OUTSIDE_ADAPTERS = new Map<string, string>([]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(SRC, path)] : [];
  });
}

const FILES = sourceFiles(SRC).map((file) => ({
  file,
  text: readFileSync(join(SRC, file), 'utf8'),
}));

const tables = AGGREGATE_TABLES.join('|');
/** A query builder's call on a table, a job queue over one, or a table in raw SQL. */
const NAMES_AGGREGATE = new RegExp(
  [
    String.raw`\b(?:selectFrom|updateTable|insertInto|deleteFrom|innerJoin|leftJoin|rightJoin)\(\s*'(?:${tables})(?: as \w+)?'`,
    String.raw`\btable: '(?:${tables})'`,
    String.raw`\b(?:FROM|UPDATE|INTO|JOIN)\s+(?:${tables})\b`,
  ].join('|'),
);
const HOLDS_SQL = /\b(?:selectFrom|updateTable|insertInto|deleteFrom)\(|\bsql[`<]/;
const ADAPTERS = ['adapters/store/', 'adapters/jobs/', 'adapters/events/'];

it("reads and writes the aggregates' tables only in their repository modules", () => {
  const readers = FILES.filter(
    ({ file, text }) => !file.startsWith('adapters/store/') && NAMES_AGGREGATE.test(text),
  ).map(({ file }) => file);
  expect(readers.filter((file) => !KNOWN_AGGREGATE_READERS.has(file))).toEqual([]);
  expect([...KNOWN_AGGREGATE_READERS.keys()].filter((file) => !readers.includes(file))).toEqual([]);
});

it('holds SQL only in the adapters and the resources’ queries, but for the listed modules', () => {
  const holders = FILES.filter(
    ({ file, text }) =>
      !ADAPTERS.some((folder) => file.startsWith(folder)) &&
      !file.endsWith('-queries.ts') &&
      HOLDS_SQL.test(text),
  ).map(({ file }) => file);
  expect(holders.filter((file) => !KNOWN_SQL_OUTSIDE_ADAPTERS.has(file))).toEqual([]);
  expect([...KNOWN_SQL_OUTSIDE_ADAPTERS.keys()].filter((file) => !holders.includes(file))).toEqual(
    [],
  );
});

it('finds what it looks for', () => {
  expect(NAMES_AGGREGATE.test(".selectFrom('instances')")).toBe(true);
  expect(NAMES_AGGREGATE.test("innerJoin('databases as d', 'd.id', 'x')")).toBe(true);
  expect(NAMES_AGGREGATE.test('UPDATE builds SET status')).toBe(true);
  expect(NAMES_AGGREGATE.test(".selectFrom('connections')")).toBe(false);
  expect(FILES.filter(({ file }) => file.startsWith('adapters/store/')).length).toBeGreaterThan(5);
});
