import { describe, expect, it } from 'vitest';
import { WalQueue } from '../src/postgres/postgres-wal-queue.ts';

function queue(high = 3, low = 1) {
  const events: string[] = [];
  const q = new WalQueue<number>({
    high,
    low,
    pause: () => events.push('pause'),
    resume: () => events.push('resume'),
  });
  return { q, events };
}

describe('WalQueue', () => {
  it('hands out items in order, waiting for the next one', async () => {
    const { q } = queue();
    q.push(1);
    expect(await q.next()).toBe(1);
    const waiting = q.next();
    q.push(2);
    expect(await waiting).toBe(2);
  });

  it('pauses the socket past the high mark and resumes below the low one', async () => {
    const { q, events } = queue(3, 2);
    for (let i = 0; i < 5; i++) q.push(i);
    expect(events).toEqual(['pause']);
    await q.next(); // 4 left
    await q.next(); // 3 left
    await q.next(); // 2 left
    expect(events).toEqual(['pause']);
    await q.next(); // 1 left
    expect(events).toEqual(['pause', 'resume']);
  });

  it('throws a failure after the items before it', async () => {
    const { q } = queue();
    q.push(1);
    q.fail(new Error('lost'));
    q.push(2);
    expect(await q.next()).toBe(1);
    await expect(q.next()).rejects.toThrow('lost');
  });

  it('returns null once closed, at once, whatever is left', async () => {
    const { q } = queue();
    const waiting = q.next();
    q.close();
    expect(await waiting).toBeNull();
    q.push(1);
    expect(await q.next()).toBeNull();
  });
});
