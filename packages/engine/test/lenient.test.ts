/** `@lenient` drops unknown fields from the selection and relaxes nothing else. */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { shop, TEST_META } from './fixtures.ts';

const { schema, generation } = shop();

function run(text: string) {
  return JSON.parse(new QueryEngine(schema).execute(generation, text, TEST_META));
}

function errorOf(text: string): EngineError {
  try {
    run(text);
  } catch (error) {
    if (error instanceof EngineError) return error;
    throw error;
  }
  throw new Error(`expected "${text}" to fail`);
}

describe('@lenient drops unknown selection fields', () => {
  it('plain fields', () => {
    expect(run('@lenient customers (id <= 2) { id nickname name }').data).toEqual([
      { id: 1, name: 'Ada' },
      { id: 2, name: 'Björk' },
    ]);
  });

  it('unknown relations with a nested selection', () => {
    expect(run('@lenient customers (id = 1) { id invoices { id total } }').data).toEqual([
      { id: 1 },
    ]);
  });

  it('unknown fields inside a nested selection', () => {
    expect(run('@lenient customers (id = 1) { id orders { id color } }').data).toEqual([
      { id: 1, orders: [{ id: 10 }, { id: 11 }] },
    ]);
    expect(run('@lenient orders (id = 10) { id customer { name shoe_size } }').data).toEqual([
      { id: 10, customer: { name: 'Ada' } },
    ]);
  });

  it('aggregates over unknown fields', () => {
    expect(
      run('@lenient orders { status COUNT(*) SUM(weight) AVG(nope) } ORDER BY status').data,
    ).toEqual([
      { status: 'open', count: 1 },
      { status: 'paid', count: 3 },
      { status: 'void', count: 1 },
    ]);
  });

  it('keeps wildcards and known fields as they are', () => {
    expect(run('@lenient customers (id = 4) { * bogus }').data).toEqual([
      { id: 4, name: null, country: null },
    ]);
  });

  it('without the pragma the same fields are errors', () => {
    expect(errorOf('customers { id nickname }').code).toBe('executor_error');
    expect(errorOf('customers { id invoices { id } }').code).toBe('executor_error');
    expect(errorOf('orders { SUM(weight) }').code).toBe('executor_error');
  });

  it('errors when nothing known is left', () => {
    const error = errorOf('@lenient customers { nickname }');
    expect(error.code).toBe('executor_error');
    expect(error.message).toBe('The selection on table "customers" has no known field.');
  });
});

describe('@lenient never relaxes filters or ORDER BY', () => {
  it('unknown filter fields, top level and nested, stay errors', () => {
    for (const text of [
      "@lenient customers (nickname = 'x') { id }",
      "@lenient customers (id = 1 OR nickname = 'x') { id }",
      "@lenient orders (customer.nickname = 'x') { id }",
      "@lenient customers { id orders (color = 'red') { id } }",
    ]) {
      const error = errorOf(text);
      expect(error.code, text).toBe('executor_error');
      expect(error.message, text).toMatch(
        /^Unknown field "(nickname|color)" on table "(customers|orders)"\./,
      );
    }
  });

  it('unknown ORDER BY fields, top level, nested and grouped, stay errors', () => {
    for (const text of [
      '@lenient customers { id } ORDER BY nickname',
      '@lenient orders { id } ORDER BY customer.nickname',
      '@lenient customers { id orders { id } ORDER BY color }',
    ]) {
      expect(errorOf(text).message, text).toMatch(/^Unknown field "(nickname|color)"/);
    }
    // A grouped ORDER BY naming a field dropped from the selection is still an error.
    expect(errorOf('@lenient orders { status weight COUNT(*) } ORDER BY weight').message).toBe(
      'ORDER BY "weight" must name a selected field or aggregate of a grouped query.',
    );
  });

  it('other errors stay errors', () => {
    expect(errorOf("@lenient customers (id = 'one') { id }").message).toBe(
      `Field "id" holds numbers; 'one' is not one.`,
    );
    expect(errorOf('@lenient orders { SUM(status) }').message).toBe(
      'SUM needs a numeric field; "status" is string. MIN and MAX take fields of any type.',
    );
    // A known field misused is not unknown: @lenient does not drop it.
    expect(errorOf('@lenient customers { id name { first } }').message).toBe(
      '"name" on table "customers" is a field, not a relation: it takes no nested selection.',
    );
    expect(errorOf('@lenient invoices { id }').code).toBe('unknown_table');
  });
});
