/**
 * Issue 12's fuzzer: 5,000 generated malformed and hostile queries, half POST, half GET, against
 * `replix serve` over the 1,000,000-row hostile fixture. Every answer is below 500, an envelope,
 * and in within `query.timeout_ms` + 1 s; a cheap lookup answers correctly after every 500.
 */
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBounded } from './bounded-pool.ts';
import {
  ANSWER_BOUND_MS,
  type Answer,
  CHEAP_QUERY,
  CHEAP_ROWS,
  createHostileDatabase,
  describeAnswer,
  INSTANCE_MEMORY_MB,
  isErrorEnvelope,
  isSuccessEnvelope,
  NO_ANSWER,
  type ServeChild,
  startServeChild,
} from './hostile-fixture.ts';
import {
  encodeQueryParameter,
  type FuzzCase,
  generateFuzzCases,
} from './hostile-fuzz-generator.ts';

const SEED = 12;
const CASES = 5000;
const CONCURRENCY = 4;
const CHECK_EVERY = 500;
/** The whole run's hard cap: once defences exist the 5,000 take well under this. */
const DEADLINE_MS = 270_000;
const KEEP_FAILURES = 20;

let database: TestDatabase;
let child: ServeChild;

beforeAll(async () => {
  database = await createHostileDatabase(testMariaDb());
  child = await startServeChild(database.url);
}, 300_000);

afterAll(async () => {
  await child?.stop();
  await database?.drop();
});

function send(fuzz: FuzzCase): Promise<Answer> {
  if (fuzz.method === 'POST') return child.query(fuzz.text, 'POST');
  return child.request(`/query?q=${encodeQueryParameter(fuzz.text)}`, {
    headers: { Authorization: `Bearer ${child.apiKey}` },
  });
}

/** Why an answer breaks the contract, or undefined when it keeps it. */
function violation(answer: Answer): string | undefined {
  if (answer.status === NO_ANSWER) return 'no answer';
  if (answer.status >= 500) return 'a 5xx';
  const envelope =
    answer.status === 200 ? isSuccessEnvelope(answer.body) : isErrorEnvelope(answer.body);
  if (!envelope) return 'not an envelope';
  if (answer.ms > ANSWER_BOUND_MS) return 'over the time bound';
  return undefined;
}

describe('hostile fuzzer', () => {
  it('generates the same cases from the same seed, half POST and half GET', () => {
    const first = generateFuzzCases(SEED, 200);
    expect(generateFuzzCases(SEED, 200)).toEqual(first);
    expect(first.filter((fuzz) => fuzz.method === 'GET')).toHaveLength(100);
    expect(new Set(first.map((fuzz) => fuzz.kind)).size).toBeGreaterThan(5);
  });

  it('encodes a lone surrogate as invalid UTF-8 and everything else as UTF-8', () => {
    expect(encodeQueryParameter('a\ud800b')).toBe('a%ed%a0%80b');
    expect(encodeQueryParameter('é 😀')).toBe('%C3%A9%20%F0%9F%98%80');
  });

  it(`${CASES} malformed and hostile queries: no 5xx, envelopes, in time, the instance serving`, {
    timeout: DEADLINE_MS + 60_000,
  }, async () => {
    const cases = generateFuzzCases(SEED, CASES);
    const started = performance.now();
    const failures: string[] = [];
    let failed = 0;
    const cheapFailures: string[] = [];
    const sent = await runBounded(
      cases,
      CONCURRENCY,
      async (fuzz, index) => {
        const answer = await send(fuzz);
        const problem = violation(answer);
        if (problem) {
          failed++;
          if (failures.length < KEEP_FAILURES) {
            failures.push(
              `#${index} ${fuzz.method} ${fuzz.kind} (${fuzz.text.length} chars: ${JSON.stringify(fuzz.text.slice(0, 80))}): ${problem}, ${describeAnswer(answer)}`,
            );
          }
        }
        if ((index + 1) % CHECK_EVERY === 0) {
          const cheap = await child.query(CHEAP_QUERY);
          const body = cheap.body as { data?: unknown } | undefined;
          if (cheap.status !== 200 || JSON.stringify(body?.data) !== JSON.stringify(CHEAP_ROWS))
            cheapFailures.push(`after #${index}: ${describeAnswer(cheap)}`);
        }
      },
      () => !child.alive() || cheapFailures.length > 0 || performance.now() - started > DEADLINE_MS,
    );
    const seconds = (performance.now() - started) / 1000;
    const peak = child.alive() ? child.peakRssMb() : Number.NaN;
    process.stderr.write(
      `hostile-fuzz: ${sent} sent in ${seconds.toFixed(1)} s, ${failed} failed, peak VmHWM ${Math.round(peak)} MB\n`,
    );
    expect(child.alive(), child.exitReport()).toBe(true);
    expect(cheapFailures).toEqual([]);
    expect(failures).toEqual([]);
    expect(sent, `sent ${sent} of ${CASES} before the deadline`).toBe(CASES);
    expect(peak).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
  });
});
