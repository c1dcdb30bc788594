import { describe, expect, it } from 'vitest';
import { redactedShape } from '../src/index.ts';

describe('redactedShape', () => {
  it('writes every string and number as ?, whatever reads it', () => {
    expect(
      redactedShape(
        `orders { id total customer { name } } WHERE total > 12.5 AND note LIKE '%secret%' ORDER BY id LIMIT 10 AFTER 'cursor'`,
      ),
    ).toBe(
      'orders { id total customer { name } } WHERE total > ? AND note LIKE ? ORDER BY id LIMIT ? AFTER ?',
    );
  });

  it('keeps quoted names as written and drops layout and comments', () => {
    const shape = redactedShape('"order" {\n  id -- the key: 4111 1111\n}\nWHERE id IN (1, 2)');
    expect(shape).toBe('"order" { id } WHERE id IN ( ? , ? )');
    expect(shape).not.toContain('4111');
  });

  it('is null for text that does not lex', () => {
    expect(redactedShape("orders { id } WHERE name = 'unterminated")).toBeNull();
    expect(redactedShape('orders { id }', 2)).toBeNull();
  });
});
