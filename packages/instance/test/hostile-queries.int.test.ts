/**
 * Issue 12's hostile-query table, one test per row, against `replix serve` over a real MariaDB
 * with 1,000,000 rows, held to an `xs` instance (512 MB). Every hostile query gets a clear 4xx
 * envelope or a correct, bounded 200 within `query.timeout_ms` + 1 s, and a cheap primary-key
 * lookup answers correctly right after.
 */
import { connect } from 'node:net';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { QUERY_CONCURRENCY } from '../src/http/query-route.ts';
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
} from './hostile-fixture.ts';
import {
  expectCheapQueryAnswers,
  expectEnvelope,
  type HostileInstance,
  startHostileInstance,
} from './hostile-instance.ts';
import { HOSTILE_SHAPES } from './hostile-shapes.ts';

/**
 * What many distinct queries may add to the resident set: caches bounded by bytes keep it
 * far under the 700 MB and 236 MB the issue measured, and leave the snapshot and query working
 * memory most of the 512 MB instance.
 */
const RSS_GROWTH_LIMIT_MB = 150;

let database: TestDatabase;
let instance: HostileInstance;

beforeAll(async () => {
  database = await createHostileDatabase(testMariaDb());
  instance = await startHostileInstance(database);
}, 300_000);

afterAll(async () => {
  await instance?.stop();
  await database?.drop();
});

beforeEach(async () => {
  await instance.ensureServing();
}, 300_000);

function expectWithinBudget(answer: Answer): void {
  expect(answer.ms, `answered ${describeAnswer(answer)}`).toBeLessThanOrEqual(ANSWER_BOUND_MS);
}

async function sqlIds(sql: string): Promise<number[]> {
  return (await database.query<{ id: number }>(sql)).map((row) => row.id);
}

/** The payload of a chunked HTTP/1.1 body. */
function unchunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.slice(at, lineEnd), 16);
    if (!(size > 0)) return out;
    out += body.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** Writes raw bytes to the instance and reads the whole answer (it closes after a refusal). */
function rawExchange(url: string, request: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer in 5 s')));
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      const bodyStart = received.indexOf('\r\n\r\n');
      const head = bodyStart < 0 ? received : received.slice(0, bodyStart);
      const body = bodyStart < 0 ? '' : received.slice(bodyStart + 4);
      resolve({ status, body: /^transfer-encoding: *chunked/im.test(head) ? unchunk(body) : body });
    });
  });
}

describe('hostile query shapes', () => {
  it.each(HOSTILE_SHAPES)('$name: a 4xx envelope or a correct 200, in time', async (shape) => {
    const answer = await instance.child.query(shape.text);
    expectWithinBudget(answer);
    expectEnvelope(answer);
    if (answer.status === 200) {
      expect(shape.sql, `a 200 cannot be right: ${describeAnswer(answer)}`).toBeDefined();
      const rows = (answer.body as { data: { id: number }[] }).data;
      expect(rows.map((row) => row.id)).toEqual(await sqlIds(shape.sql!));
    } else {
      expect(answer.status, describeAnswer(answer)).toBe(400);
      expect(shape.codes).toContain((answer.body as { error: { code: string } }).error.code);
    }
    await expectCheapQueryAnswers(instance.child);
  });
});

describe('many distinct queries keep memory bounded', () => {
  async function expectBoundedGrowth(
    count: number,
    send: (i: number) => Promise<Answer>,
    check: (answer: Answer) => void,
  ): Promise<void> {
    const child = instance.child;
    const before = child.rssMb();
    let slowest: Answer | undefined;
    const failures: string[] = [];
    await runBounded(
      Array.from({ length: count }, (_, i) => i),
      4,
      async (i) => {
        const answer = await send(i);
        if (!slowest || answer.ms > slowest.ms) slowest = answer;
        try {
          check(answer);
        } catch (error) {
          if (failures.length < 5) failures.push(`#${i}: ${(error as Error).message}`);
        }
      },
      () => !child.alive() || failures.length >= 5,
    );
    expect(child.alive(), child.exitReport()).toBe(true);
    expect(failures).toEqual([]);
    expect(slowest!.ms, `slowest ${describeAnswer(slowest!)}`).toBeLessThanOrEqual(ANSWER_BOUND_MS);
    const growth = child.rssMb() - before;
    expect(growth, `VmRSS grew ${Math.round(growth)} MB`).toBeLessThanOrEqual(RSS_GROWTH_LIMIT_MB);
    await expectCheapQueryAnswers(child);
  }

  it('2,100 distinct valid 54 KB queries', { timeout: 300_000 }, async () => {
    const padding = 'x'.repeat(54 * 1024);
    await expectBoundedGrowth(
      2100,
      (i) => instance.child.query(`p (name = '${i}${padding}') { id }`),
      (answer) => {
        expectEnvelope(answer);
        // Valid and cheap: no row matches; a length cap may refuse it instead.
        if (answer.status === 200) expect((answer.body as { data: unknown[] }).data).toEqual([]);
        else
          expect((answer.body as { error: { code: string } }).error.code).toBe('query_too_complex');
      },
    );
  });

  it('10,000 distinct invalid 15 KB GETs', { timeout: 300_000 }, async () => {
    // Letters only, so the URL stays 15 KB and under Node's 16 KB header limit.
    const padding = 'z'.repeat(15 * 1024);
    await expectBoundedGrowth(
      10_000,
      (i) => instance.child.query(`p{id}${padding}${i}`, 'GET'),
      (answer) => {
        expectEnvelope(answer);
        expect(answer.status).toBe(400);
        expect((answer.body as { error: { code: string } }).error.code).toBe('parse_error');
      },
    );
  });
});

describe('HTTP-level refusals', () => {
  it.each([
    ['20 KB', 20 * 1024],
    ['200 KB', 200 * 1024],
  ])('a GET with a %s URL answers with an envelope', async (_label, bytes) => {
    // A valid query with a long comment: a raised limit would answer it correctly.
    const answer = await instance.child.query(
      `p (id = 7) { id name } -- ${'c'.repeat(bytes)}`,
      'GET',
    );
    expectWithinBudget(answer);
    expectEnvelope(answer);
    if (answer.status === 200) {
      expect((answer.body as { data: unknown }).data).toEqual(CHEAP_ROWS);
    } else {
      // Over the header limit, or (with a raised limit) a query over query.max_body_bytes.
      const refusal = `${answer.status} ${(answer.body as { error: { code: string } }).error.code}`;
      expect(['431 request_header_too_large', '413 payload_too_large']).toContain(refusal);
    }
    expect(answer.text).not.toMatch(/at .+\.ts:\d+/);
    await expectCheapQueryAnswers(instance.child);
  });
  it('a 1 MB header answers 431 with the envelope', async () => {
    const answer = await instance.child.request(`/query?q=${encodeURIComponent(CHEAP_QUERY)}`, {
      headers: {
        Authorization: `Bearer ${instance.child.apiKey}`,
        'X-Padding': 'h'.repeat(1 << 20),
      },
    });
    expectEnvelope(answer);
    expect(answer.status, describeAnswer(answer)).toBe(431);
    expect((answer.body as { error: { code: string } }).error.code).toBe(
      'request_header_too_large',
    );
    await expectCheapQueryAnswers(instance.child);
  });

  it('a malformed HTTP request answers 400 bad_request with the envelope', async () => {
    const { status, body } = await rawExchange(
      instance.child.url,
      'GET /query HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n',
    );
    expect(status, body).toBe(400);
    expect(JSON.parse(body)).toEqual({
      error: { code: 'bad_request', message: expect.any(String) },
    });
    await expectCheapQueryAnswers(instance.child);
  });
});

describe("one key's burst", () => {
  it("queues one key's queries apart: past its share of the queue it gets 429, another key still answers", async () => {
    const { child } = instance;
    const otherKey = child.adminKey;
    expect(otherKey, 'replix serve prints an adminKey').toBeDefined();
    // Far more slow queries at once than run together and than one key may have waiting (each
    // scans 1,000,000 rows), well under what the instance may have waiting in all.
    const burst = QUERY_CONCURRENCY.maxConcurrent + QUERY_CONCURRENCY.maxQueuedPerKey + 40;
    expect(burst).toBeLessThan(QUERY_CONCURRENCY.maxQueued);
    const slow = "c (v LIKE '%zz%') { id } LIMIT 1";
    const answers = Array.from({ length: burst }, () => child.query(slow, 'POST', child.apiKey));
    const cheap = await child.query(CHEAP_QUERY, 'POST', otherKey);
    const settled = await Promise.all(answers);
    const seen = new Map<string, number>();
    for (const answer of settled) {
      const what = isErrorEnvelope(answer.body)
        ? `${answer.status} ${answer.body.error.message.slice(0, 40)}`
        : String(answer.status);
      seen.set(what, (seen.get(what) ?? 0) + 1);
    }
    const refusals = settled.filter(
      (answer) =>
        answer.status === 429 &&
        isErrorEnvelope(answer.body) &&
        /This key has \d+ queries waiting/.test(answer.body.error.message),
    );
    expect(
      refusals.length,
      `refused past the key's share of the queue; the burst's answers: ${JSON.stringify([...seen])}`,
    ).toBeGreaterThan(0);
    expect(cheap.status, describeAnswer(cheap)).toBe(200);
    expect((cheap.body as { data: unknown }).data).toEqual(CHEAP_ROWS);
    expectWithinBudget(cheap);
    await expectCheapQueryAnswers(child);
  }, 120_000);
});

describe('key scopes', () => {
  it.each(['/reload', '/replication/pause'])(
    'a query key cannot POST %s',
    async (path) => {
      const child = instance.child;
      const answer = await child.request(path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${child.apiKey}` },
      });
      if (path === '/replication/pause' && answer.status === 200) {
        // Leave replication running for the tests after this one.
        await child.request('/replication/resume', {
          method: 'POST',
          headers: { Authorization: `Bearer ${child.adminKey ?? child.apiKey}` },
        });
      }
      expect(answer.status, describeAnswer(answer)).toBe(403);
      expect(isErrorEnvelope(answer.body) && answer.body.error.code).toBe('forbidden');
      expect(child.adminKey, 'replix serve prints an adminKey').toBeDefined();
      await expectCheapQueryAnswers(child);
    },
    120_000,
  );
});

describe('after the whole suite', () => {
  it(`the first instance is still serving, its peak RSS within ${INSTANCE_MEMORY_MB} MB`, async () => {
    expect(instance.replaced, 'instances replaced after a crash or wedge').toEqual([]);
    expect(instance.child.alive()).toBe(true);
    await expectCheapQueryAnswers(instance.child);
    const peak = instance.peakRssMb();
    process.stderr.write(`hostile-queries: peak VmHWM ${Math.round(peak)} MB\n`);
    expect(peak, 'VmHWM was read').toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(INSTANCE_MEMORY_MB);
  });
});
