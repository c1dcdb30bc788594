import { readFileSync } from 'node:fs';
import {
  PLAN_CACHE_BYTES,
  PLAN_CACHE_MAX_ENTRY_BYTES,
  QUERY_DEFAULTS,
  QUERY_LIMITS,
} from '@replix/engine';
import { HTTP_LIMITS } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { CLIENT_MEMORY_KEY_MIN_BYTES, CLIENT_MEMORY_KEY_SHARE } from '../src/http/client-memory.ts';
import { DECODED_TEXTS_MAX_CHARS } from '../src/http/query-listener.ts';
import { QUERY_CONCURRENCY } from '../src/http/query-route.ts';
import { INSTANCE_VARIABLE_SCHEMAS } from '../src/instance-config.ts';
import { LIVE_QUERY_LIMITS } from '../src/threads/live-queries.ts';

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
    expect(row('Queries of one key waiting for a turn')).toContain(
      `| ${QUERY_CONCURRENCY.maxQueuedPerKey} |`,
    );
    expect(row('Queries of one key waiting for a turn')).toContain(
      '`QUERY_CONCURRENCY.maxQueuedPerKey`',
    );
    expect(row('Queries of one key running at once')).toContain(
      `| ${QUERY_CONCURRENCY.maxRunningPerKey} |`,
    );
    expect(row('Queries of one key running at once')).toContain(
      '`QUERY_CONCURRENCY.maxRunningPerKey`',
    );
  });

  it('gives the plan cache its budget and its largest entry', () => {
    const mib = (bytes: number) => `${bytes / 1024 / 1024} MiB`;
    expect(row('Query plan cache')).toContain(`| ${mib(PLAN_CACHE_BYTES)} of heap,`);
    expect(row('Query plan cache')).toContain(`a plan over ${mib(PLAN_CACHE_MAX_ENTRY_BYTES)}`);
  });

  it('gives the bound of the decoded query texts', () => {
    expect(row('Decoded query texts')).toContain(`| ${plain(DECODED_TEXTS_MAX_CHARS)} characters`);
  });

  it('gives the live-query limits', () => {
    expect(row('Open live queries of one key')).toContain(`| ${plain(LIVE_QUERY_LIMITS.perKey)} |`);
    expect(row('Open live queries in all')).toContain(`| ${plain(LIVE_QUERY_LIMITS.perThread)} |`);
    expect(row('Event bytes waiting for a slow reader')).toContain(
      `| ${LIVE_QUERY_LIMITS.maxBufferedBytes / 1024 / 1024} MiB |`,
    );
    expect(row('reads nothing while events wait')).toContain(
      `${LIVE_QUERY_LIMITS.heartbeatMs / 1000} to ${(2 * LIVE_QUERY_LIMITS.heartbeatMs) / 1000} s`,
    );
    expect(row("Bytes held for one key's live queries")).toContain(
      `${CLIENT_MEMORY_KEY_SHARE * 100}% of the thread's working memory, at least ${CLIENT_MEMORY_KEY_MIN_BYTES / 1024 / 1024} MiB`,
    );
    expect(row("Bytes held for one key's live queries")).toContain(
      `each ${LIVE_QUERY_LIMITS.textBytesFactor} × its bytes`,
    );
    expect(row('Re-evaluation time per key per swap')).toContain(
      `| ${LIVE_QUERY_LIMITS.keySwapBudgetMs} ms |`,
    );
    expect(row('Re-evaluation time per key per turn')).toContain(
      `| ${LIVE_QUERY_LIMITS.keyTurnMs} ms |`,
    );
    expect(row('refused for overload is tried again')).toContain(
      `after ${LIVE_QUERY_LIMITS.overloadRetryMs / 1000} s`,
    );
    expect(row("a live query's streams end")).toContain(
      `| ${LIVE_QUERY_LIMITS.overloadGiveUpMs / 1000} s |`,
    );
    expect(row('Heartbeat')).toContain(`every ${LIVE_QUERY_LIMITS.heartbeatMs / 1000} s`);
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
