import { describe, expect, it } from 'vitest';
import { PollPauses } from '../src/adapters/drivers/kubernetes/poll-pauses.ts';

describe('PollPauses', () => {
  it('starts at the first pause and grows by half each time, up to the longest', () => {
    const pauses = new PollPauses(100, 2000);
    const taken = Array.from({ length: 10 }, () => pauses.next());
    expect(taken).toEqual([100, 150, 225, 338, 507, 761, 1142, 1713, 2000, 2000]);
  });

  it('keeps to the longest pause when the first is already past it', () => {
    const pauses = new PollPauses(3000, 2000);
    expect([pauses.next(), pauses.next(), pauses.next()]).toEqual([3000, 2000, 2000]);
  });

  it('gives each poller its own sequence', () => {
    const one = new PollPauses(200, 2000);
    const other = new PollPauses(200, 2000);
    one.next();
    one.next();
    expect(other.next()).toBe(200);
    expect(one.next()).toBe(450);
  });
});
