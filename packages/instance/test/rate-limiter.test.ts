import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { rateLimitField, rateLimitPolicyField } from '../src/http/rate-limit-check.ts';
import { RateLimiter, type RateLimitPolicy } from '../src/http/rate-limiter.ts';

/** A clock the test moves by hand (milliseconds). */
function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

function limiterFor(policy: RateLimitPolicy, keyIds: string[] = ['aaaaaaaaaaaaaaaa']) {
  const clock = fakeClock();
  const limiter = new RateLimiter(policy, { now: clock.now });
  limiter.assign(keyIds);
  return { limiter, clock };
}

const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';

describe('RateLimiter', () => {
  it('lets a key send its whole quota at once, counting down, then refuses it', () => {
    const { limiter } = limiterFor({ quota: 3, windowSeconds: 6 });
    expect(limiter.take(A)).toEqual({ allowed: true, remaining: 2, resetSeconds: 2 });
    expect(limiter.take(A)).toEqual({ allowed: true, remaining: 1, resetSeconds: 4 });
    expect(limiter.take(A)).toEqual({ allowed: true, remaining: 0, resetSeconds: 6 });
    // The next request may go in 2 s: one request's share of the window.
    expect(limiter.take(A)).toEqual({ allowed: false, remaining: 0, resetSeconds: 2 });
    // A refused request costs nothing: asking again does not push the wait out.
    expect(limiter.take(A)).toEqual({ allowed: false, remaining: 0, resetSeconds: 2 });
  });

  it('gives back one request per window / quota, and the whole quota after a window', () => {
    const { limiter, clock } = limiterFor({ quota: 10, windowSeconds: 1 });
    for (let i = 0; i < 10; i++) expect(limiter.take(A).allowed).toBe(true);
    expect(limiter.take(A).allowed).toBe(false);
    clock.advance(99);
    expect(limiter.take(A)).toEqual({ allowed: false, remaining: 0, resetSeconds: 1 });
    clock.advance(1);
    expect(limiter.take(A)).toEqual({ allowed: true, remaining: 0, resetSeconds: 1 });
    expect(limiter.take(A).allowed).toBe(false);
    clock.advance(5_000);
    expect(limiter.take(A)).toEqual({ allowed: true, remaining: 9, resetSeconds: 1 });
  });

  it('holds at a steady rate: a client sending exactly at the quota is never refused', () => {
    const { limiter, clock } = limiterFor({ quota: 3, windowSeconds: 1 });
    for (let i = 0; i < 3_000; i++) {
      expect(limiter.take(A).allowed).toBe(true);
      clock.advance(1000 / 3);
    }
  });

  it('counts each key apart: one key over its limit does not limit another', () => {
    const { limiter } = limiterFor({ quota: 2, windowSeconds: 10 }, [A, B]);
    limiter.take(A);
    limiter.take(A);
    expect(limiter.take(A).allowed).toBe(false);
    expect(limiter.take(B)).toEqual({ allowed: true, remaining: 1, resetSeconds: 5 });
  });

  it('does not limit a key it has no slot for (the key check refuses such a key first)', () => {
    const { limiter } = limiterFor({ quota: 1, windowSeconds: 1 });
    for (let i = 0; i < 5; i++) expect(limiter.take(B).allowed).toBe(true);
  });

  it("keeps a kept key's count when the keys change, and gives a new key a full quota in a freed slot", () => {
    const { limiter } = limiterFor({ quota: 2, windowSeconds: 60 }, [A, B]);
    limiter.take(A);
    limiter.take(A);
    limiter.take(B);
    const slotOfB = limiter.slots()[B];
    const C = 'cccccccccccccccc';
    const slots = limiter.assign([A, C]);
    expect(Object.keys(slots).sort()).toEqual([A, C]);
    expect(slots[C]).toBe(slotOfB);
    expect(limiter.take(A).allowed).toBe(false);
    expect(limiter.take(C)).toEqual({ allowed: true, remaining: 1, resetSeconds: 30 });
    // B is gone: not counted any more.
    expect(limiter.take(B).allowed).toBe(true);
  });

  it('grows its shared buffer past its first slots', () => {
    const ids = Array.from({ length: 1_000 }, (_, i) => i.toString(16).padStart(16, '0'));
    const { limiter } = limiterFor({ quota: 1, windowSeconds: 60 }, ids);
    for (const id of ids) expect(limiter.take(id).allowed).toBe(true);
    for (const id of ids) expect(limiter.take(id).allowed).toBe(false);
  });

  it('shares its counts with a limiter over the same buffer, as a query thread has', () => {
    const clock = fakeClock();
    const main = new RateLimiter({ quota: 4, windowSeconds: 1 }, { now: clock.now });
    main.assign([A]);
    const thread = new RateLimiter(main.policy, { shared: main.shared(), now: clock.now });
    expect(main.take(A).remaining).toBe(3);
    expect(thread.take(A).remaining).toBe(2);
    expect(main.take(A).remaining).toBe(1);
    expect(thread.take(A).remaining).toBe(0);
    expect(main.take(A).allowed).toBe(false);
    // Slots given out after the thread started reach it with the keys (`adopt`).
    main.assign([A, B]);
    thread.adopt(main.slots());
    thread.take(B);
    expect(main.take(B).remaining).toBe(2);
  });

  it('counts every request exactly once when threads take from one key at the same time', async () => {
    // A window so long that nothing comes back while the test runs: exactly the quota goes.
    const main = new RateLimiter({ quota: 2_000, windowSeconds: 100_000 });
    main.assign([A]);
    const workers = [0, 1, 2].map(
      () =>
        new Worker(new URL('./rate-limit-taker.ts', import.meta.url), {
          workerData: { shared: main.shared(), keyId: A, takes: 1_000 },
        }),
    );
    const allowed = await Promise.all(
      workers.map((worker) => new Promise<number>((resolve) => worker.once('message', resolve))),
    );
    await Promise.all(workers.map((worker) => worker.terminate()));
    expect(allowed.reduce((sum, n) => sum + n, 0)).toBe(2_000);
    expect(main.take(A).allowed).toBe(false);
  });

  it('refuses a quota or window that is not a whole number of at least 1', () => {
    expect(() => new RateLimiter({ quota: 0, windowSeconds: 1 })).toThrow(/quota/);
    expect(() => new RateLimiter({ quota: 1.5, windowSeconds: 1 })).toThrow(/quota/);
    expect(() => new RateLimiter({ quota: 1, windowSeconds: 0 })).toThrow(/window/);
  });
});

describe('the RateLimit fields', () => {
  it('are written in the structured-field syntax of draft-ietf-httpapi-ratelimit-headers', () => {
    expect(rateLimitPolicyField({ quota: 100, windowSeconds: 1 })).toBe('"default";q=100;w=1');
    expect(rateLimitField({ allowed: true, remaining: 42, resetSeconds: 1 })).toBe(
      '"default";r=42;t=1',
    );
  });
});
