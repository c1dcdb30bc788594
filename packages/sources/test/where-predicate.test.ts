import { describe, expect, it } from 'vitest';
import type { SourceBackend } from '../src/connector.ts';
import { validateWherePredicate } from '../src/where/validate-where-predicate.ts';

const ACCEPTED: Record<SourceBackend, string[]> = {
  mysql: [
    'id > 10',
    "status = 'active' AND (deleted_at IS NULL OR deleted_at > NOW())",
    'NOT archived',
    "region IN ('eu', 'us') AND score BETWEEN 1 AND 5",
    "name LIKE 'a%' OR name NOT LIKE '%z'",
    "`order date` >= '2024-01-01'",
    "LOWER(email) = 'a@b.c' AND COALESCE(parent_id, 0) = 0",
    "CAST(code AS CHAR) = '7' AND created_at > DATE_SUB(NOW(), INTERVAL 30 DAY)",
    "note = 'it''s' AND path = 'C:\\\\temp'",
    'price * quantity >= 100 AND kind IS NOT NULL',
    "CASE WHEN kind = 'a' THEN 1 ELSE 0 END = 1",
  ],
  postgres: [
    'id > 10',
    "status = 'active' AND (deleted_at IS NULL OR deleted_at > now())",
    'NOT archived',
    "region IN ('eu', 'us') AND score BETWEEN 1 AND 5",
    "name LIKE 'a%'",
    `"Order Date" >= DATE '2024-01-01'`,
    "lower(email) = 'a@b.c' AND coalesce(parent_id, 0) = 0",
    "code::text = '7' AND created_at > now() - interval '30 days'",
    "CAST(code AS text) = '7'",
    "note = 'it''s'",
  ],
  mssql: [
    'id > 10',
    "status = 'active' AND (deleted_at IS NULL OR deleted_at > GETDATE())",
    "region IN ('eu', 'us') AND score BETWEEN 1 AND 5",
    "name LIKE 'a%'",
    "[order date] >= '2024-01-01'",
    "LOWER(email) = 'a@b.c' AND COALESCE(parent_id, 0) = 0",
    "CAST(code AS varchar(10)) = '7'",
    "path = 'C:\\temp\\'",
  ],
};

/** Refused everywhere, with the text the message must contain and the 1-based position. */
const REFUSED_EVERYWHERE: [string, RegExp, number][] = [
  ['1=1) UNION SELECT id, secret, secret FROM items WHERE (1=1', /closes a parenthesis/, 4],
  ['1=1; DROP TABLE x', /";" is not allowed/, 4],
  ['id IN (SELECT id FROM other)', /subqueries are not allowed/, 8],
  ['EXISTS (SELECT 1 FROM other)', /subqueries are not allowed/, 1],
  ['1=1 -- )', /comments are not allowed/, 5],
  ['1=1 /* ) UNION SELECT 1 */', /comments are not allowed/, 5],
  ['(id > 1', /"\(" is never closed/, 1],
  ['id > 1)', /closes a parenthesis/, 7],
  ["name = 'open", /is never closed/, 8],
  ['id = = 1', /not a valid SQL expression/, 6],
  ['', /cannot be empty/, 1],
  ['id > 1 AND x = (SELECT max(id) FROM t)', /subqueries are not allowed/, 17],
  ['COUNT(id) > 1', /aggregate/, 1],
  ['id > 1\u0000', /NUL/, 7],
];

const REFUSED_BY_ENGINE: Record<SourceBackend, [string, RegExp, number][]> = {
  mysql: [
    ["name = 'a\\' OR 1=1", /backslash before '/, 10],
    ['1=1 # )', /comments are not allowed/, 5],
    ['1=1 /*!) UNION SELECT 1 */', /comments are not allowed/, 5],
    ["LOAD_FILE('/etc/passwd') IS NOT NULL", /function LOAD_FILE is not allowed/, 1],
    ['SLEEP(10) = 0', /function SLEEP is not allowed/, 1],
    ['@@hostname IS NOT NULL', /variables are not allowed/, 1],
    ['other.id = 1', /without a table or schema/, 1],
  ],
  postgres: [
    ["name = E'a\\' OR 1=1", /backslash before '/, 11],
    ['name = $$x$$', /dollar quotes/, 8],
    ["pg_read_file('/etc/passwd') IS NOT NULL", /function pg_read_file is not allowed/, 1],
    ["nextval('s') > 0", /function nextval is not allowed/, 1],
  ],
  mssql: [["OPENROWSET('x') IS NULL", /function OPENROWSET is not allowed/, 1]],
};

describe.each(['mysql', 'postgres', 'mssql'] as const)('where predicates for %s', (backend) => {
  it.each(ACCEPTED[backend])('accepts %s', (text) => {
    expect(validateWherePredicate(backend, text)).toBeNull();
  });

  it.each([...REFUSED_EVERYWHERE, ...REFUSED_BY_ENGINE[backend]])(
    'refuses %s',
    (text, message, position) => {
      const problem = validateWherePredicate(backend, text);
      expect(problem?.message).toMatch(message);
      expect(problem?.position).toBe(position);
    },
  );
});
