import { readFileSync } from 'node:fs';
import { QUERY_DEFAULTS, QUERY_LIMITS } from '@replix/engine';
import { describe, expect, it } from 'vitest';
import { CLIENT_MEMORY_KEY_MIN_BYTES, CLIENT_MEMORY_KEY_SHARE } from '../src/client-memory.ts';
import { HTTP_LIMITS } from '../src/http-limits.ts';
import { INSTANCE_VARIABLE_SCHEMAS } from '../src/instance-config.ts';
import { QUERY_CONCURRENCY } from '../src/query-route.ts';

const doc = readFileSync(new URL('../../../docs/limits.md', import.meta.url), 'utf8');

/** The table row of docs/limits.md that mentions `label`. */
function row(label: string): string {
  const found = doc.split('\n').find((line) => line.startsWith('|') && line.includes(label));
  if (!found) throw new Error(`docs/limits.md has no row about ${label}`);
  return found;
}

const plain = (n: number) => n.toLocaleString('en-US');

describe('docs/limits.md', () => {
  it('gives every per-query budget with its config key and default', () => {
    expect(row('`query.timeout_ms`')).toContain(`${plain(QUERY_DEFAULTS.timeout_ms)} ms`);
    expect(row('`query.max_rows`')).toContain(`| ${plain(QUERY_DEFAULTS.max_rows)} |`);
    expect(row('`query.max_response_bytes`')).toContain(
      `${QUERY_DEFAULTS.max_response_bytes / 1024 / 1024} MiB`,
    );
    expect(row('`query.max_body_bytes`')).toContain(`${QUERY_DEFAULTS.max_body_bytes / 1024} KiB`);
    expect(row('`query.nested_default_limit`')).toContain(
      plain(QUERY_DEFAULTS.nested_default_limit),
    );
  });

  it('gives every structural cap its value', () => {
    const caps: [string, number][] = [
      ['Tokens in the query text', QUERY_LIMITS.tokens],
      ['Selections nested', QUERY_LIMITS.selectionDepth],
      ['Parentheses open at once', QUERY_LIMITS.filterDepth],
      ['ORDER BY keys of one query', QUERY_LIMITS.orderByKeys],
      ['ORDER BY keys as written', QUERY_LIMITS.writtenOrderByKeys],
      ['Conditions', QUERY_LIMITS.filterTerms],
      ['Values in one IN list', QUERY_LIMITS.inListValues],
      ['Relations one path walks', QUERY_LIMITS.pathRelations],
      ['Selection items', QUERY_LIMITS.selectionItems],
    ];
    for (const [label, value] of caps)
      expect(row(label)).toMatch(new RegExp(`\\| ${plain(value)} \\|$`));
  });

  it('gives the HTTP limits and the concurrency of queries', () => {
    expect(row('`http.max_header_bytes`')).toContain(`${HTTP_LIMITS.max_header_bytes / 1024} KiB`);
    expect(row('`http.headers_timeout_ms`')).toContain(
      `${HTTP_LIMITS.headers_timeout_ms / 1000} s`,
    );
    expect(row('`http.request_timeout_ms`')).toContain(
      `${HTTP_LIMITS.request_timeout_ms / 1000} s`,
    );
    expect(row('`http.drain_timeout_ms`')).toContain(`${HTTP_LIMITS.drain_timeout_ms / 1000} s`);
    expect(row('`http.send_timeout_ms`')).toContain(`| ${HTTP_LIMITS.send_timeout_ms / 1000} s |`);
    expect(row('Queries running at once')).toContain(`| ${QUERY_CONCURRENCY.maxConcurrent} |`);
    expect(row('Queries waiting for a turn')).toContain(`| ${QUERY_CONCURRENCY.maxQueued} |`);
  });

  it("gives each key's share of the bytes held for its clients", () => {
    expect(row('`CLIENT_MEMORY_KEY_SHARE`')).toContain(
      `| ${CLIENT_MEMORY_KEY_SHARE * 100}% of the working memory, and at least ${CLIENT_MEMORY_KEY_MIN_BYTES / 1024 / 1024} MiB;`,
    );
  });

  it('gives the rate limit settings with their defaults and range', () => {
    type Bounded = { default: number; minimum: number; maximum: number };
    const quota = INSTANCE_VARIABLE_SCHEMAS.REPLIX_RATE_LIMIT as unknown as Bounded;
    const window = INSTANCE_VARIABLE_SCHEMAS.REPLIX_RATE_LIMIT_WINDOW as unknown as Bounded;
    expect(row('`REPLIX_RATE_LIMIT`')).toContain(
      `; ${quota.default} (no limit) for \`replix serve\` |`,
    );
    expect(row('`REPLIX_RATE_LIMIT_WINDOW`')).toContain(
      `(${window.minimum} to ${plain(window.maximum)} s) | ${window.default} s |`,
    );
  });
});
