import { parseQuery } from '@replix/query';
import { describe, expect, it } from 'vitest';
import { escapeLike, RqlValueError, rql } from '../src/index.ts';

describe('rql', () => {
  it('writes each kind of value as its literal', () => {
    const when = new Date(Date.UTC(2024, 4, 1, 12, 0, 0, 5));
    const query = rql`t (a = ${"it's"} AND b = ${-1.5e-7} AND c = ${18446744073709551615n} AND d = ${true} AND e IS NOT ${null} AND f = ${when} AND g IN ${['x', 2, false]} AND h = ${rql.decimal('12.50')}) { a }`;
    expect(query.text).toBe(
      "t (a = 'it''s' AND b = -1.5e-7 AND c = 18446744073709551615 AND d = true AND e IS NOT NULL AND f = '2024-05-01T12:00:00.005Z' AND g IN ('x', 2, false) AND h = 12.50) { a }",
    );
  });

  it('keeps every digit a number has', () => {
    for (const value of [0.1, 1e21, 2 ** 53 + 2, -5e-324, 1.7976931348623157e308]) {
      const parsed = parseQuery(rql`t (a = ${value}) { a }`.text);
      const filter = parsed.filter as { value: { text: string } };
      expect(Number(filter.value.text)).toBe(value);
    }
  });

  it('puts a space where a value would otherwise join the text around it', () => {
    expect(rql`t (a=${1}) { a }`.text).toBe('t (a=1) { a }');
    expect(rql`t (a = -${-1}) { a }`.text).toBe('t (a = - -1) { a }');
    expect(rql`t (a = ${'x'}${'y'}) { a }`.text).toBe("t (a = 'x' 'y') { a }");
    expect(rql`t (a = ${'x'}OR b = 1) { a }`.text).toBe("t (a = 'x' OR b = 1) { a }");
    expect(() => rql`t (a = ${1}--${'x'}\n) { a }`).toThrow(/placeholder 2 is inside a -- comment/);
  });

  it('embeds another rql query as text', () => {
    const filter = rql`name = ${"O'Brien"}`;
    expect(rql`people (${filter}) { id } LIMIT ${5}`.text).toBe(
      "people (name = 'O''Brien') { id } LIMIT 5",
    );
  });

  it('refuses values without a literal, naming the placeholder but not the value', () => {
    const cases: [unknown, RegExp][] = [
      [undefined, /placeholder 1 is undefined/],
      [Number.NaN, /placeholder 1 is NaN/],
      [Number.POSITIVE_INFINITY, /placeholder 1 is Infinity/],
      [{ secret: 'hunter2' }, /placeholder 1 is an object \(Object\)/],
      [new Date(Number.NaN), /placeholder 1 is an invalid Date/],
      [[], /placeholder 1 is an empty array/],
      [[['nested']], /placeholder 1, item 0, is an array/],
      [['a', undefined], /placeholder 1, item 1, is undefined/],
      ['\ud800', /lone UTF-16 surrogate/],
      [Symbol('s'), /placeholder 1 is a symbol/],
      [() => 1, /placeholder 1 is a function/],
    ];
    for (const [value, message] of cases) {
      let thrown: unknown;
      try {
        rql`t (a = ${value}) { a }`;
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(RqlValueError);
      expect((thrown as Error).message).toMatch(message);
      expect((thrown as Error).message).not.toContain('hunter2');
    }
  });

  it('refuses placeholders inside quotes and comments, where a value could change the query', () => {
    expect(() => rql`t (a = '${'x'}') { a }`).toThrow(/placeholder 1 is inside a '…' string/);
    expect(() => rql`t ("${'x'}" = 1) { a }`).toThrow(/inside a "…" name/);
    expect(() => rql`t -- note ${'a\n) OR (1 = 1'}\n { a }`).toThrow(/inside a -- comment/);
    expect(() => rql`t (a = 'it''s' AND b = ${'x'}) { a }`).not.toThrow();
    expect(() => rql`t -- note\n (a = ${'x'}) { a }`).not.toThrow();
    const open = rql`t -- note`;
    expect(() => rql`${open} (a = ${1}) { a }`).toThrow(/placeholder 2 is inside a -- comment/);
  });

  it('refuses a template with an invalid escape, whose text JavaScript leaves undefined', () => {
    expect(() => rql`t (a = '\u{') { a }`).toThrow(/invalid escape/);
  });

  it('refuses decimal() text that is not a number', () => {
    for (const text of ['', '1.', '.5', '1e', '12abc', '1 OR 1=1', '--1', '+1']) {
      expect(() => rql.decimal(text)).toThrow(RqlValueError);
    }
    expect(rql.decimal('-0.000100').text).toBe('-0.000100');
  });

  it('escapes LIKE patterns so the text matches itself', () => {
    expect(escapeLike('50%_off\\')).toBe('50\\%\\_off\\\\');
  });
});
