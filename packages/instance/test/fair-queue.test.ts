import { describe, expect, it } from 'vitest';
import { FairQueue } from '../src/threads/fair-queue.ts';

/** Runs the queue to the end, charging each item the cost `cost` gives it; the order run. */
function runAll(queue: FairQueue<string>, cost: (item: string) => number): string[] {
  const order: string[] = [];
  for (let turn = queue.next(); turn; turn = queue.next()) {
    order.push(turn.item);
    queue.charge(turn.keys, cost(turn.item));
  }
  return order;
}

describe('FairQueue: deficit round robin by key over the time items take', () => {
  it("gives another key's item the next turn while one key has a flood queued", () => {
    const queue = new FairQueue<string>(20);
    for (let i = 0; i < 60; i++) queue.add(`flood${i}`, ['flood']);
    queue.add('cheap', ['calm']);
    const order = runAll(queue, (item) => (item === 'cheap' ? 1 : 100));
    expect(order.indexOf('cheap')).toBeLessThanOrEqual(1);
    expect(order).toHaveLength(61);
  });

  it('lets a key whose items cost more than its turn wait out rounds, never the others', () => {
    const queue = new FairQueue<string>(20);
    const order: string[] = [];
    for (let round = 0; round < 10; round++) {
      queue.add(`heavy${round}a`, ['heavy']);
      queue.add(`heavy${round}b`, ['heavy']);
      queue.add(`light${round}`, ['light']);
      // Each round, the light key's item runs before the heavy key's second one.
      for (let step = 0; step < 2; step++) {
        const turn = queue.next();
        if (!turn) break;
        order.push(turn.item);
        queue.charge(turn.keys, turn.item.startsWith('heavy') ? 100 : 5);
      }
      expect(order).toContain(`light${round}`);
    }
    // The heavy key, 100 ms an item against a 20 ms turn, got one item in five turns at most.
    const heavy = order.filter((item) => item.startsWith('heavy')).length;
    expect(heavy).toBeLessThanOrEqual(order.length - heavy);
  });

  it("lets a key past its window's budget run only when no key within its budget has an item due", () => {
    const queue = new FairQueue<string>(20, 250);
    for (let i = 0; i < 10; i++) queue.add(`flood${i}`, ['flood']);
    const order: string[] = [];
    const step = () => {
      const turn = queue.next();
      if (!turn) return;
      order.push(turn.item);
      queue.charge(turn.keys, turn.item.startsWith('flood') ? 100 : 10);
    };
    // Alone, the flood runs past its budget: nothing else wants the time.
    for (let i = 0; i < 5; i++) step();
    expect(order).toEqual(['flood0', 'flood1', 'flood2', 'flood3', 'flood4']);
    // Now over it, every item of another key goes first, even one queued after its turn came.
    for (let i = 0; i < 3; i++) queue.add(`calm${i}`, ['calm']);
    for (let i = 0; i < 3; i++) step();
    expect(order.slice(5)).toEqual(['calm0', 'calm1', 'calm2']);
    // A new window: the flood's budget is whole again, and turns alternate.
    queue.newWindow();
    queue.add('calm3', ['calm']);
    step();
    step();
    expect(order.slice(8).sort()).toEqual(['calm3', 'flood5']);
  });

  it('runs an item due under several keys once, at the first of their turns, and splits its cost', () => {
    const queue = new FairQueue<string>(20);
    queue.add('a1', ['a']);
    queue.add('shared', ['b']);
    queue.add('shared', ['a']);
    expect(queue.size).toBe(2);
    const first = queue.next();
    expect(first?.item).toBe('a1');
    queue.charge(first?.keys ?? [], 10);
    const second = queue.next();
    expect(second).toEqual({ item: 'shared', keys: ['b', 'a'] });
    expect(queue.next()).toBeUndefined();
  });

  it('keeps one place for an item queued again before its turn (coalesced)', () => {
    const queue = new FairQueue<string>(20);
    queue.add('x', ['a']);
    queue.add('y', ['a']);
    queue.add('x', ['a']);
    expect(runAll(queue, () => 1)).toEqual(['x', 'y']);
  });

  it('forgets an item taken out before its turn', () => {
    const queue = new FairQueue<string>(20);
    queue.add('x', ['a', 'b']);
    queue.add('y', ['b']);
    queue.remove('x');
    expect(queue.has('x')).toBe(false);
    expect(runAll(queue, () => 1)).toEqual(['y']);
  });
});
