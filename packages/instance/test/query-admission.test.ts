import { describe, expect, it } from 'vitest';
import { InstanceError } from '../src/errors.ts';
import { type Admission, QueryAdmission } from '../src/threads/query-admission.ts';

const MB = 1024 * 1024;
const never = () => new AbortController().signal;

function gate(maxConcurrent: number, maxQueued: number, workingMb = 100, maxQueuedPerKey?: number) {
  return new QueryAdmission({
    maxConcurrent,
    maxQueued,
    workingMemoryBytes: () => workingMb * MB,
    ...(maxQueuedPerKey === undefined ? {} : { maxQueuedPerKey }),
  });
}

/** Acquires for `key`, noting `name` in `order` once admitted (and releasing it when told). */
function queueNamed(admission: QueryAdmission, order: string[], bytes = 1) {
  return (name: string, key: string, signal = never()) =>
    admission.acquire(bytes, signal, key).then((admitted) => {
      order.push(name);
      return admitted;
    });
}

/** Tracks which acquisitions have settled, so tests see admission order without timing. */
function track(promise: Promise<Admission>) {
  const state: { admission?: Admission; error?: unknown } = {};
  promise.then(
    (admission) => {
      state.admission = admission;
    },
    (error: unknown) => {
      state.error = error;
    },
  );
  return state;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('QueryAdmission', () => {
  it('tryAcquire admits at once when the query fits and nobody waits, else leaves it to acquire', async () => {
    const admission = gate(1, 5);
    const running = admission.tryAcquire(10 * MB);
    expect(running).not.toBeNull();
    expect(admission.running).toBe(1);
    // Full: no admission, and nothing queued by trying.
    expect(admission.tryAcquire(1 * MB)).toBeNull();
    expect(admission.queued).toBe(0);
    const waiting = track(admission.acquire(1 * MB, never()));
    running?.release();
    await settle();
    expect(waiting.admission).toBeDefined();
    // A waiter ahead is never overtaken by a try.
    const queuedBehind = track(admission.acquire(1 * MB, never()));
    expect(admission.tryAcquire(1 * MB)).toBeNull();
    waiting.admission?.release();
    await settle();
    expect(queuedBehind.admission).toBeDefined();
    expect(admission.running).toBe(1);
  });

  it('admits at once while under the concurrency and memory limits', async () => {
    const admission = gate(2, 5);
    const first = await admission.acquire(10 * MB, never());
    await admission.acquire(10 * MB, never());
    expect(admission.running).toBe(2);
    expect(admission.inFlightBytes).toBe(20 * MB);
    expect(admission.queued).toBe(0);
    first.release();
    expect(admission.running).toBe(1);
    expect(admission.inFlightBytes).toBe(10 * MB);
  });

  it('queues beyond maxConcurrent and admits waiters in arrival order', async () => {
    const admission = gate(1, 5);
    const running = await admission.acquire(1, never());
    const order: string[] = [];
    const named = (name: string) =>
      admission.acquire(1, never()).then((admitted) => {
        order.push(name);
        return admitted;
      });
    const a = named('a');
    const b = named('b');
    const c = named('c');
    expect(admission.queued).toBe(3);
    running.release();
    (await a).release();
    (await b).release();
    (await c).release();
    expect(order).toEqual(['a', 'b', 'c']);
    expect(admission.running).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it('lets a newcomer wait behind the queue even when it would fit', async () => {
    const admission = gate(3, 5, 100);
    const big = await admission.acquire(60 * MB, never());
    const waitingBig = track(admission.acquire(60 * MB, never()));
    const small = track(admission.acquire(1 * MB, never()));
    await settle();
    expect(waitingBig.admission).toBeUndefined();
    expect(small.admission).toBeUndefined();
    big.release();
    await settle();
    expect(waitingBig.admission).toBeDefined();
    expect(small.admission).toBeDefined();
  });

  it('holds back a query whose memory does not fit beside the running ones', async () => {
    const admission = gate(10, 5, 100);
    const first = await admission.acquire(70 * MB, never());
    const second = track(admission.acquire(40 * MB, never()));
    await settle();
    expect(second.admission).toBeUndefined();
    expect(admission.queued).toBe(1);
    first.release();
    await settle();
    expect(second.admission).toBeDefined();
    expect(admission.inFlightBytes).toBe(40 * MB);
  });

  it('runs a query bigger than the whole working memory alone instead of starving it', async () => {
    const admission = gate(4, 5, 100);
    const small = await admission.acquire(1 * MB, never());
    const huge = track(admission.acquire(500 * MB, never()));
    const after = track(admission.acquire(1 * MB, never()));
    await settle();
    expect(huge.admission).toBeUndefined();
    small.release();
    await settle();
    expect(huge.admission).toBeDefined();
    expect(admission.running).toBe(1);
    // While it runs, nothing else fits beside it.
    expect(after.admission).toBeUndefined();
    huge.admission?.release();
    await settle();
    expect(after.admission).toBeDefined();
  });

  it('admits a lone huge query at once when nothing runs', async () => {
    const admission = gate(4, 0, 0);
    const huge = await admission.acquire(10_000 * MB, never());
    expect(admission.running).toBe(1);
    huge.release();
  });

  it('makes release idempotent: a second call frees nothing more', async () => {
    const admission = gate(2, 5);
    const first = await admission.acquire(5 * MB, never());
    await admission.acquire(7 * MB, never());
    first.release();
    first.release();
    expect(admission.running).toBe(1);
    expect(admission.inFlightBytes).toBe(7 * MB);
  });

  it('refuses with too_many_requests when maxQueued are already waiting', async () => {
    const admission = gate(1, 2);
    await admission.acquire(1, never());
    void admission.acquire(1, never());
    void admission.acquire(1, never());
    const refused = admission.acquire(1, never());
    await expect(refused).rejects.toBeInstanceOf(InstanceError);
    await expect(refused).rejects.toMatchObject({ code: 'too_many_requests', status: 429 });
    expect(admission.queued).toBe(2);
  });

  it('refuses at once with no queue when maxQueued is 0', async () => {
    const admission = gate(1, 0);
    await admission.acquire(1, never());
    await expect(admission.acquire(1, never())).rejects.toMatchObject({
      code: 'too_many_requests',
    });
  });

  it('removes an aborted waiter from the queue and rejects with the signal reason', async () => {
    const admission = gate(1, 5);
    const running = await admission.acquire(1, never());
    const controller = new AbortController();
    const aborted = admission.acquire(1, controller.signal);
    const next = track(admission.acquire(1, never()));
    expect(admission.queued).toBe(2);
    const reason = new Error('client went away');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(admission.queued).toBe(1);
    running.release();
    await settle();
    expect(next.admission).toBeDefined();
    expect(admission.running).toBe(1);
  });

  it('admits those behind an aborted head waiter that now fit', async () => {
    const admission = gate(4, 5, 100);
    await admission.acquire(50 * MB, never());
    const controller = new AbortController();
    const head = admission.acquire(80 * MB, controller.signal);
    const small = track(admission.acquire(10 * MB, never()));
    await settle();
    expect(small.admission).toBeUndefined();
    controller.abort(new Error('gone'));
    await expect(head).rejects.toThrow('gone');
    await settle();
    expect(small.admission).toBeDefined();
  });

  it('rejects at once with the reason of an already aborted signal', async () => {
    const admission = gate(1, 5);
    const reason = new Error('already gone');
    await expect(admission.acquire(1, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(admission.running).toBe(0);
  });

  it('ignores an abort after admission: the query holds its slot until released', async () => {
    const admission = gate(1, 5);
    const controller = new AbortController();
    const held = await admission.acquire(1, controller.signal);
    controller.abort(new Error('late'));
    expect(admission.running).toBe(1);
    held.release();
    expect(admission.running).toBe(0);
  });

  it('reads the working memory anew, so a shrinking budget holds back the next query', async () => {
    let working = 100 * MB;
    const admission = new QueryAdmission({
      maxConcurrent: 10,
      maxQueued: 5,
      workingMemoryBytes: () => working,
    });
    await admission.acquire(30 * MB, never());
    working = 40 * MB;
    const next = track(admission.acquire(20 * MB, never()));
    await settle();
    expect(next.admission).toBeUndefined();
  });

  it('counts negative or non-finite estimates as zero bytes', async () => {
    const admission = gate(2, 0);
    await admission.acquire(-5, never());
    await admission.acquire(Number.NaN, never());
    expect(admission.inFlightBytes).toBe(0);
  });

  it('rejects nonsensical limits', () => {
    expect(() => gate(0, 1)).toThrow(RangeError);
    expect(() => gate(1, -1)).toThrow(RangeError);
    expect(() => gate(1, 1, 100, -1)).toThrow(RangeError);
    expect(
      () =>
        new QueryAdmission({
          maxConcurrent: 2,
          maxQueued: 1,
          maxRunningPerKey: 0,
          workingMemoryBytes: () => MB,
        }),
    ).toThrow(RangeError);
  });

  describe('between keys', () => {
    it("admits waiting keys in turn: one key's burst does not hold up another key", async () => {
      const admission = gate(1, 20);
      const running = await admission.acquire(1, never(), 'x');
      const order: string[] = [];
      const named = queueNamed(admission, order);
      // Each query is done as soon as it is admitted: the next turn follows at once.
      const done = (name: string, key: string) => named(name, key).then((a) => a.release());
      const waiting = [
        done('a1', 'a'),
        done('a2', 'a'),
        done('a3', 'a'),
        done('b1', 'b'),
        done('c1', 'c'),
        done('c2', 'c'),
      ];
      expect(admission.queued).toBe(6);
      running.release();
      await Promise.all(waiting);
      expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'c2', 'a3']);
      expect(admission.queued).toBe(0);
      expect(admission.running).toBe(0);
    });

    it('gives a key that comes back after its queue emptied a turn after those waiting', async () => {
      const admission = gate(1, 20);
      const running = await admission.acquire(1, never(), 'x');
      const order: string[] = [];
      const named = queueNamed(admission, order);
      const a1 = named('a1', 'a');
      const b1 = named('b1', 'b');
      const b2 = named('b2', 'b');
      running.release();
      const first = await a1;
      // Key a has nothing waiting now: its next query queues behind key b's turn.
      const a2 = named('a2', 'a');
      first.release();
      (await b1).release();
      (await a2).release();
      (await b2).release();
      expect(order).toEqual(['a1', 'b1', 'a2', 'b2']);
    });

    it("keeps slots one key cannot run in: another key's query runs at once beside its burst", async () => {
      const admission = new QueryAdmission({
        maxConcurrent: 4,
        maxQueued: 20,
        maxRunningPerKey: 3,
        workingMemoryBytes: () => 100 * MB,
      });
      const burst = [1, 2, 3].map(() => admission.tryAcquire(1, 'a'));
      expect(burst.every((admitted) => admitted !== null)).toBe(true);
      // Key a runs all it may: its next query waits though a slot is free.
      expect(admission.tryAcquire(1, 'a')).toBeNull();
      const fourth = track(admission.acquire(1, never(), 'a'));
      await settle();
      expect(fourth.admission).toBeUndefined();
      // Another key's query takes the free slot at once, though a waits ahead of it.
      const other = track(admission.acquire(1, never(), 'b'));
      await settle();
      expect(other.admission).toBeDefined();
      expect(admission.running).toBe(4);
      // Key a's waiter runs when one of its own queries ends.
      burst[0]?.release();
      await settle();
      expect(fourth.admission).toBeDefined();
    });

    it("keeps memory one key cannot hold: another key's query runs at once beside its burst", async () => {
      // Slots are plenty; memory is what one key's burst would take: 3/4 of it at most.
      const admission = new QueryAdmission({
        maxConcurrent: 40,
        maxQueued: 20,
        maxRunningPerKey: 30,
        workingMemoryBytes: () => 100 * MB,
      });
      const burst = Array.from({ length: 7 }, () => admission.tryAcquire(10 * MB, 'a'));
      expect(burst.every((admitted) => admitted !== null)).toBe(true);
      // 70 MB held: an eighth would take key a past its 75 MB, though 30 MB are free.
      expect(admission.tryAcquire(10 * MB, 'a')).toBeNull();
      const waiting = track(admission.acquire(10 * MB, never(), 'a'));
      await settle();
      expect(waiting.admission).toBeUndefined();
      // Key b's query is admitted at once, though key a waits ahead of it.
      const other = track(admission.acquire(10 * MB, never(), 'b'));
      await settle();
      expect(other.admission).toBeDefined();
      expect(admission.inFlightBytes).toBe(80 * MB);
      // Key a's waiter runs once one of its own queries ends.
      burst[0]?.release();
      await settle();
      expect(waiting.admission).toBeDefined();
      expect(admission.inFlightBytes).toBe(80 * MB);
    });

    it("lets a key's first query run whatever its size, as a lone query does", () => {
      const admission = new QueryAdmission({
        maxConcurrent: 4,
        maxQueued: 20,
        maxRunningPerKey: 2,
        workingMemoryBytes: () => 100 * MB,
      });
      const other = admission.tryAcquire(10 * MB, 'b');
      // Past key a's share (50 MB), within what is free: its first query runs.
      expect(admission.tryAcquire(60 * MB, 'a')).not.toBeNull();
      expect(admission.tryAcquire(1 * MB, 'a')).toBeNull();
      other?.release();
    });

    it('refuses a key past its share of the queue, while other keys may still wait', async () => {
      const admission = gate(1, 10, 100, 2);
      await admission.acquire(1, never(), 'a');
      void admission.acquire(1, never(), 'a');
      void admission.acquire(1, never(), 'a');
      const refused = admission.acquire(1, never(), 'a');
      await expect(refused).rejects.toBeInstanceOf(InstanceError);
      await expect(refused).rejects.toMatchObject({ code: 'too_many_requests', status: 429 });
      await expect(refused).rejects.toThrow(/This key has 2 queries waiting/);
      const other = track(admission.acquire(1, never(), 'b'));
      await settle();
      expect(other.error).toBeUndefined();
      expect(admission.queued).toBe(3);
    });

    it('still refuses past the whole queue, whichever the keys', async () => {
      const admission = gate(1, 2, 100, 2);
      await admission.acquire(1, never(), 'a');
      void admission.acquire(1, never(), 'a');
      void admission.acquire(1, never(), 'b');
      await expect(admission.acquire(1, never(), 'c')).rejects.toMatchObject({
        code: 'too_many_requests',
      });
    });

    it('never lets small queries of other keys overtake a big one whose turn it is', async () => {
      const admission = gate(4, 10, 100);
      const running = await admission.acquire(70 * MB, never(), 'x');
      const order: string[] = [];
      const named = (name: string, key: string, bytes: number) =>
        admission.acquire(bytes, never(), key).then((admitted) => {
          order.push(name);
          return admitted;
        });
      const big = named('a-big', 'a', 80 * MB);
      void named('a-small', 'a', 10 * MB);
      const small = named('b-small', 'b', 10 * MB);
      await settle();
      // b's query would fit beside the running one, but a's big one waits first.
      expect(order).toEqual([]);
      running.release();
      await big;
      await small;
      await settle();
      expect(order).toEqual(['a-big', 'b-small', 'a-small']);
      expect(admission.inFlightBytes).toBe(100 * MB);
    });

    it("takes an aborted waiter out of its key's queue: its place and its key's turn", async () => {
      const admission = gate(1, 10, 100, 1);
      const running = await admission.acquire(1, never(), 'x');
      const order: string[] = [];
      const named = queueNamed(admission, order);
      const leaving = new AbortController();
      const gone = named('a1', 'a', leaving.signal);
      const b1 = named('b1', 'b');
      await expect(admission.acquire(1, never(), 'a')).rejects.toMatchObject({
        code: 'too_many_requests',
      });
      leaving.abort(new Error('client went away'));
      await expect(gone).rejects.toThrow('client went away');
      expect(admission.queued).toBe(1);
      // Its key may wait again, now behind b.
      const a2 = named('a2', 'a');
      running.release();
      (await b1).release();
      (await a2).release();
      expect(order).toEqual(['b1', 'a2']);
      expect(admission.running).toBe(0);
    });
  });
});
