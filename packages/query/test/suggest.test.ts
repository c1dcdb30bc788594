import { describe, expect, it } from 'vitest';
import { suggest } from '../src/index.ts';

describe('suggest', () => {
  it('finds a candidate one typo away', () => {
    expect(suggest('lenent', ['lenient'])).toBe('lenient');
    expect(suggest('emial', ['id', 'email', 'name'])).toBe('email');
    expect(suggest('nme', ['name'])).toBe('name');
    expect(suggest('names', ['name'])).toBe('name');
  });

  it('counts swapping two adjacent characters as one edit', () => {
    // Plain Levenshtein counts two, over the threshold of 1 for a four-letter name.
    expect(suggest('nmae', ['name'])).toBe('name');
    expect(suggest('nmea', ['name'])).toBeUndefined();
  });

  it('compares case-insensitively and returns the candidate as spelled', () => {
    expect(suggest('USERS', ['Users'])).toBe('Users');
    expect(suggest('Emial', ['EMAIL'])).toBe('EMAIL');
  });

  it('allows max(1, floor(length / 3)) edits', () => {
    expect(suggest('ab', ['xy'])).toBeUndefined();
    expect(suggest('ab', ['ax'])).toBe('ax');
    expect(suggest('cstmr', ['customer'])).toBeUndefined();
    expect(suggest('cstomr', ['customer'])).toBe('customer');
    expect(suggest('cstmer', ['customer'])).toBe('customer');
    expect(suggest('order_itms_ttal', ['order_items_total'])).toBe('order_items_total');
    expect(suggest('ordr_itms_ttl', ['order_items_total'])).toBe('order_items_total');
    expect(suggest('ord_itms_ttl', ['order_items_total'])).toBeUndefined();
  });

  it('picks the closest candidate, the first listed on a tie', () => {
    expect(suggest('ordr', ['orders', 'order'])).toBe('order');
    expect(suggest('cat', ['bat', 'car'])).toBe('bat');
    expect(suggest('cat', ['car', 'bat'])).toBe('car');
  });

  it('returns undefined when nothing is close or there is nothing to pick from', () => {
    expect(suggest('xyz', ['name', 'email'])).toBeUndefined();
    expect(suggest('name', [])).toBeUndefined();
  });

  it('counts code points, not UTF-16 units', () => {
    expect(suggest('cafe', ['café'])).toBe('café');
    expect(suggest('😀x', ['😁x'])).toBe('😁x');
  });
});
