/**
 * Generates malformed and hostile queries over the hostile fixture's tables from a seeded PRNG:
 * mutations of valid queries (tokens inserted, deleted, duplicated; truncation) and the
 * issue's attack patterns (deep nesting, huge literals, odd characters, long lists and chains).
 * The same seed gives the same queries, so a failure can be replayed.
 */
import { mulberry32 } from '@replix/testkit/mulberry32';

export interface FuzzCase {
  readonly text: string;
  readonly method: 'GET' | 'POST';
  /** Which generator made it, for failure messages. */
  readonly kind: string;
}

const VALID_QUERIES = [
  'p { id name }',
  'p (id = 7) { id name n }',
  'c (id < 10) { id v p { name } } ORDER BY n DESC LIMIT 5',
  "p (name LIKE 'p1%') { id c { id } LIMIT 3 } LIMIT 4",
  'pay { id amount s { name } } LIMIT 3',
  'c (id < 500) { COUNT(*) n } ORDER BY count DESC LIMIT 3',
  "c (p.n = 3 AND id IN (1, 2, 3)) { id } AFTER ''",
  "@lenient p (n BETWEEN 1 AND 3 OR name ILIKE 'P2%') { id nope } OFFSET 2 LIMIT 2",
  'c (v IS NOT NULL AND p_id != 5) { id SUM(n) AVG(n) } LIMIT 2',
  'c { p_id MIN(v) MAX(n) COUNT(DISTINCT v) } HAVING count_distinct_v > 1 AND MAX(n) < 90 ORDER BY MIN(v) LIMIT 4',
  "p { id c { MAX(v) COUNT(DISTINCT n) } HAVING max_v LIKE 'v%' }",
  'p { ... } LIMIT 2',
  's { id name } -- a comment',
];

const KEYWORDS = [
  'ORDER',
  'BY',
  'LIMIT',
  'OFFSET',
  'AFTER',
  'AND',
  'OR',
  'NOT',
  'IN',
  'LIKE',
  'ILIKE',
  'IS',
  'NULL',
  'BETWEEN',
  'ASC',
  'DESC',
  'COUNT(*)',
  'HAVING',
  'DISTINCT',
  'MIN(',
  'MAX(',
  '@lenient',
  'true',
  'false',
];
const PUNCTUATION = [
  '{',
  '}',
  '(',
  ')',
  ',',
  '.',
  '*',
  '...',
  '=',
  '!=',
  '<>',
  '<=',
  "'",
  '--',
  '@',
];
const NAMES = ['p', 'c', 's', 'pay', 'id', 'name', 'n', 'v', 'p_id', 'picture', 'amount', 'nope'];
const NUMBERS = [
  '0',
  '-1',
  '1e308',
  '-1e309',
  '99999999999999999999999999999',
  '0.0000000000000000000001',
  '9007199254740993',
  '1e',
  '0x10',
  'NaN',
  'Infinity',
];
const ODD_CHARACTERS = [
  '\u0000',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\u200b',
  '\ufeff',
  '\t',
  '\r',
  '\r\n',
  '\u001b',
  '\u{1f600}',
  '\u{1d7d8}',
  'é',
  'ς',
  '\\',
];
/** Lone surrogates only survive a GET's URL (percent-encoded by hand); a POST body is UTF-8. */
const LONE_SURROGATES = ['\ud800', '\udfff'];

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;
const between = (random: Random, low: number, high: number) =>
  low + Math.floor(random() * (high - low + 1));

function tokens(text: string): string[] {
  return text.match(/'(?:[^']|'')*'|\.\.\.|[A-Za-z_@][\w]*|-?\d[\w.]*|\S/g) ?? [];
}

function randomToken(random: Random, method: 'GET' | 'POST'): string {
  switch (between(random, 0, 6)) {
    case 0:
      return pick(random, KEYWORDS);
    case 1:
      return pick(random, PUNCTUATION);
    case 2:
      return pick(random, NAMES);
    case 3:
      return pick(random, NUMBERS);
    case 4:
      return method === 'GET' && random() < 0.3
        ? pick(random, LONE_SURROGATES)
        : pick(random, ODD_CHARACTERS);
    case 5:
      return `'${'x'.repeat(between(random, 0, method === 'GET' ? 2000 : 20_000))}'`;
    default:
      return `'${pick(random, ODD_CHARACTERS)}${pick(random, NAMES)}'`;
  }
}

function mutate(random: Random, text: string, method: 'GET' | 'POST'): string {
  const parts = tokens(text);
  const edits = between(random, 1, 4);
  for (let edit = 0; edit < edits && parts.length > 0; edit++) {
    const at = between(random, 0, parts.length - 1);
    switch (between(random, 0, 3)) {
      case 0:
        parts.splice(at, 0, randomToken(random, method));
        break;
      case 1:
        parts.splice(at, 1);
        break;
      case 2:
        parts.splice(at, 0, ...parts.slice(at, at + between(random, 1, 5)));
        break;
      default:
        parts.length = at;
    }
  }
  return parts.join(pick(random, [' ', '', '\n', '\t']));
}

function deepParentheses(random: Random): string {
  const depth = between(random, 10, 3000);
  return `p (${'('.repeat(depth)}id = 1${')'.repeat(between(random, depth - 2, depth))}) { id }`;
}

function deepSelection(random: Random): string {
  const depth = between(random, 3, 300);
  const names = Array.from({ length: depth }, (_, i) => (i % 2 === 0 ? 'c' : 'p'));
  const field = pick(random, ['id', '*', '...']);
  return `p { ${field} ${names.map((name) => `${name} { ${field} `).join('')}${'}'.repeat(depth)} }`;
}

function longInList(random: Random): string {
  const count = between(random, 100, 6000);
  return `c (id IN (${Array.from({ length: count }, (_, i) => i * 7).join(',')})) { id }`;
}

/**
 * The table a heavy pattern runs over: mostly the 1,000-row `p`, sometimes the 1,000,000-row
 * `c`, so the 5,000 cases finish in minutes while each pattern still meets the big table.
 */
function heavyTable(random: Random): 'p' | 'c' {
  return random() < 0.1 ? 'c' : 'p';
}

function manyOrderKeys(random: Random): string {
  const table = heavyTable(random);
  const fields = table === 'c' ? ['n', 'id', 'v', 'p.name'] : ['n', 'id', 'name'];
  const keys = Array.from(
    { length: between(random, 10, 5000) },
    () => `${pick(random, fields)} ${pick(random, ['', 'ASC', 'DESC'])}`,
  );
  return `${table} { id } ORDER BY ${keys.join(', ')} LIMIT ${between(random, 1, 50)}`;
}

function relationChain(random: Random): string {
  const table = heavyTable(random);
  const hops = between(random, 1, 40);
  const chain = Array.from({ length: hops }, (_, i) =>
    (i % 2 === 0) === (table === 'c') ? 'p' : 'c',
  );
  return `${table} (id < ${between(random, 1, 1000)} AND ${chain.join('.')}.n = ${between(random, -1, 5)}) { id }`;
}

function longOrChain(random: Random): string {
  const terms = between(random, 50, 4000);
  const op = pick(random, ['OR', 'AND']);
  return `${heavyTable(random)} (${Array.from({ length: terms }, (_, i) => `n = ${i}`).join(` ${op} `)}) { id } LIMIT 5`;
}

function wildcardsEverywhere(random: Random): string {
  const wild = () => pick(random, ['*', '...', '* ...', '... *']);
  const limit = random() < 0.1 ? between(random, 1, 30_000) : between(random, 1, 50);
  return `pay { ${wild()} s { ${wild()} pay { ${wild()} } } } LIMIT ${limit}`;
}

function keywordsMisplaced(random: Random): string {
  const words = Array.from({ length: between(random, 2, 12) }, () =>
    random() < 0.6 ? pick(random, KEYWORDS) : pick(random, NAMES),
  );
  return words.join(' ');
}

const GENERATORS: Record<string, (random: Random, method: 'GET' | 'POST') => string> = {
  mutation: (random, method) => mutate(random, pick(random, VALID_QUERIES), method),
  deepParentheses,
  deepSelection,
  longInList,
  manyOrderKeys,
  relationChain,
  longOrChain,
  wildcardsEverywhere,
  keywordsMisplaced,
};
const KINDS = Object.keys(GENERATORS);

/**
 * `count` cases, alternating POST and GET; about two in three are mutations of valid queries
 * (cheap to answer), the rest attack patterns, many of which run to the time budget.
 */
export function generateFuzzCases(seed: number, count: number): FuzzCase[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, (_, i) => {
    const method = i % 2 === 0 ? 'POST' : 'GET';
    const kind = random() < 0.65 ? 'mutation' : pick(random, KINDS);
    return { text: GENERATORS[kind]!(random, method), method, kind };
  });
}

/**
 * Percent-encodes a GET's `q` as UTF-8, except that a lone surrogate is written as the bytes
 * a careless encoder would produce (WTF-8), which are not valid UTF-8.
 */
export function encodeQueryParameter(text: string): string {
  let out = '';
  for (const char of text) {
    const unit = char.charCodeAt(0);
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += `%${(0xe0 | (unit >> 12)).toString(16)}%${(0x80 | ((unit >> 6) & 0x3f)).toString(16)}%${(0x80 | (unit & 0x3f)).toString(16)}`;
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}
