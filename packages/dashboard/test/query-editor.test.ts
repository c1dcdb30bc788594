import { CompletionContext } from '@codemirror/autocomplete';
import { EditorState } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import type { InstanceSchema } from '../src/components/instance-schema.ts';
import { exampleQuery } from '../src/query-editor/example-query.ts';
import { queryCompletion } from '../src/query-editor/query-completion.ts';
import { expectedAt } from '../src/query-editor/query-context.ts';
import { queryDiagnostics } from '../src/query-editor/query-diagnostics.ts';
import { editorTokens } from '../src/query-editor/query-tokens.ts';

/** The demo shop's `/schema`, as far as the editor reads it. */
const SHOP: InstanceSchema = {
  tables: [
    {
      name: 'customers',
      columns: [{ name: 'id' }, { name: 'name' }, { name: 'country' }],
      relations: [{ name: 'orders', kind: 'to-many', table: 'orders' }],
    },
    {
      name: 'orders',
      columns: [{ name: 'id' }, { name: 'status' }, { name: 'placed_on' }],
      relations: [
        { name: 'customer', kind: 'to-one', table: 'customers' },
        { name: 'order_items', kind: 'to-many', table: 'order_items' },
      ],
    },
    {
      name: 'order_items',
      columns: [{ name: 'id' }, { name: 'quantity' }],
      relations: [{ name: 'order', kind: 'to-one', table: 'orders' }],
    },
  ],
};

/** What is expected where `|` stands, and the word typed there so far. */
function at(marked: string) {
  const pos = marked.indexOf('|');
  const text = marked.replace('|', '');
  const { from, expected } = expectedAt(editorTokens(text), pos, SHOP);
  return { ...expected, typed: text.slice(from, pos) };
}

describe('the editor’s tokens, from the query lexer', () => {
  it('classes every token, keywords and comments included', () => {
    const text = "@lenient customers (name LIKE 'A%' AND id >= 2) { id } -- first\nLIMIT 5";
    const tokens = editorTokens(text).map((token) => [
      text.slice(token.from, token.to),
      token.kind,
    ]);
    expect(tokens).toEqual([
      ['@', 'punctuation'],
      ['lenient', 'keyword'],
      ['customers', 'name'],
      ['(', 'punctuation'],
      ['name', 'name'],
      ['LIKE', 'keyword'],
      ["'A%'", 'string'],
      ['AND', 'keyword'],
      ['id', 'name'],
      ['>=', 'operator'],
      ['2', 'number'],
      [')', 'punctuation'],
      ['{', 'punctuation'],
      ['id', 'name'],
      ['}', 'punctuation'],
      ['-- first', 'comment'],
      ['LIMIT', 'keyword'],
      ['5', 'number'],
    ]);
  });

  it('reads on past a bad character, and runs an unterminated string to the end', () => {
    const text = "customers { id # name } (note = 'open";
    const tokens = editorTokens(text).map((token) => [
      text.slice(token.from, token.to),
      token.kind,
    ]);
    expect(tokens).toEqual([
      ['customers', 'name'],
      ['{', 'punctuation'],
      ['id', 'name'],
      ['#', 'invalid'],
      ['name', 'name'],
      ['}', 'punctuation'],
      ['(', 'punctuation'],
      ['note', 'name'],
      ['=', 'operator'],
      ["'open", 'invalid'],
    ]);
  });
});

describe('what the editor completes where', () => {
  it('offers tables at the start, after a pragma too', () => {
    expect(at('cu|')).toEqual({ kind: 'table', typed: 'cu' });
    expect(at('@lenient |')).toEqual({ kind: 'table', typed: '' });
    expect(at('@|')).toEqual({ kind: 'nothing', typed: '' });
  });

  it('offers the fields of the table whose braces or filter the cursor is in', () => {
    expect(at('customers { id na|')).toEqual({
      kind: 'field',
      table: 'customers',
      relations: 'all',
      also: 'aggregates',
      typed: 'na',
    });
    expect(at('customers (|')).toMatchObject({ kind: 'field', table: 'customers' });
    expect(at("customers (name = 'x' AND |")).toMatchObject({ kind: 'field', table: 'customers' });
    expect(at('customers (name = |')).toEqual({ kind: 'nothing', typed: '' });
    expect(at('customers { COUNT(|')).toMatchObject({
      kind: 'field',
      relations: 'none',
      also: 'distinct',
    });
    expect(at('customers { COUNT(DISTINCT |')).toEqual({
      kind: 'field',
      table: 'customers',
      relations: 'none',
      typed: '',
    });
    expect(at('customers { MAX(|')).toEqual({
      kind: 'field',
      table: 'customers',
      relations: 'none',
      typed: '',
    });
  });

  it('offers a grouped selection’s keys after HAVING and in its ORDER BY', () => {
    const keys = {
      kind: 'groupKey',
      fields: ['status'],
      aggregates: ['count', 'max_placed_on', 'count_distinct_id'],
    };
    const grouped = 'orders { status COUNT(*) MAX(placed_on) COUNT(DISTINCT id) }';
    expect(at(`${grouped} HAVING |`)).toEqual({ ...keys, typed: '' });
    expect(at(`${grouped} HAVING count > 1 AND ma|`)).toEqual({ ...keys, typed: 'ma' });
    expect(at(`${grouped} ORDER BY |`)).toEqual({ ...keys, typed: '' });
    expect(at(`${grouped} HAVING count > |`)).toEqual({ kind: 'nothing', typed: '' });
    expect(at('customers { orders { COUNT(*) } HAVING |')).toEqual({
      kind: 'groupKey',
      fields: [],
      aggregates: ['count'],
      typed: '',
    });
  });

  it('follows relations to the related table, in selections, filters and paths', () => {
    expect(at('customers { id orders { |')).toMatchObject({ kind: 'field', table: 'orders' });
    expect(at('customers { orders (st|')).toMatchObject({ kind: 'field', table: 'orders' });
    expect(at('customers { orders (x = 1) { |')).toMatchObject({ table: 'orders' });
    expect(at('customers { orders { id } |')).toMatchObject({ table: 'customers' });
    expect(at('order_items (order.customer.|')).toMatchObject({ table: 'customers' });
    expect(at('customers (name = 1) { orders { order_items { |')).toMatchObject({
      table: 'order_items',
    });
  });

  it('offers the sorted table’s fields after ORDER BY, and nothing after LIMIT', () => {
    expect(at('orders { id } ORDER BY |')).toEqual({
      kind: 'field',
      table: 'orders',
      relations: 'to-one',
      typed: '',
    });
    expect(at('orders { id } ORDER BY id DESC, customer.|')).toMatchObject({ table: 'customers' });
    expect(at('customers { orders { id } ORDER BY pl|')).toMatchObject({ table: 'orders' });
    expect(at('orders { id } LIMIT |')).toEqual({ kind: 'nothing', typed: '' });
    expect(at("customers (name = 'a|")).toEqual({ kind: 'nothing', typed: '' });
  });
});

describe('the completion list', () => {
  const schema: InstanceSchema = {
    tables: [
      {
        name: 'line items',
        columns: [
          { name: 'id', type: 'bigint' },
          { name: 'say "hi"', type: 'string' },
        ],
        relations: [{ name: 'order', kind: 'to-one', table: 'line items' }],
      },
    ],
  };
  const complete = queryCompletion(schema);
  /** The completion at the end of `text`, asked with Ctrl+Space or not. */
  function listAt(text: string, explicit: boolean) {
    const context = new CompletionContext(EditorState.create({ doc: text }), text.length, explicit);
    return complete(context) as { from: number; options: { label: string }[] } | null;
  }

  it('writes names that are not plain identifiers quoted, as the lexer reads them', () => {
    expect(listAt('', true)?.options.map((option) => option.label)).toEqual(['"line items"']);
    expect(listAt('"line items" { ', true)?.options.slice(0, 4)).toEqual([
      { label: 'id', type: 'property', detail: 'bigint' },
      { label: '"say ""hi"""', type: 'property', detail: 'string' },
      { label: 'order', type: 'namespace', detail: 'to-one → line items' },
      { label: 'COUNT(*)', type: 'function', detail: 'aggregate: rows' },
    ]);
  });

  it('offers the aggregates in a selection, DISTINCT in COUNT, and keys in HAVING', () => {
    const labels = (text: string) => listAt(text, true)?.options.map((option) => option.label);
    expect(labels('"line items" { id ')).toEqual([
      'id',
      '"say ""hi"""',
      'order',
      'COUNT(*)',
      'COUNT',
      'SUM',
      'AVG',
      'MIN',
      'MAX',
    ]);
    expect(labels('"line items" { COUNT(')).toEqual(['id', '"say ""hi"""', 'DISTINCT']);
    expect(labels('"line items" { id MIN(id) } HAVING ')).toEqual(['id', 'min_id']);
  });

  it('opens by itself on a started name or a path’s dot, otherwise only when asked', () => {
    expect(listAt('"line items" { ', false)).toBeNull();
    expect(listAt('"line items" { i', false)?.from).toBe(15);
    expect(listAt('"line items" (order.', false)?.options).toHaveLength(3);
  });
});

describe('the editor’s diagnostics, from the query parser', () => {
  it('underlines the token the parser stops at, with its message', () => {
    expect(queryDiagnostics('customers { id } LIMT 5')).toEqual([
      {
        from: 17,
        to: 21,
        severity: 'error',
        message:
          'Syntax error: Expected HAVING, ORDER BY, LIMIT, OFFSET, AFTER or end of query, found name "LIMT".',
      },
    ]);
  });

  it('points at the end when something is missing, and says nothing of a valid or empty query', () => {
    expect(queryDiagnostics('customers { id  \n')).toMatchObject([
      { from: 14, to: 14, message: 'Syntax error: Expected "}", found end of query.' },
    ]);
    expect(queryDiagnostics('customers { id }')).toEqual([]);
    expect(queryDiagnostics('  ')).toEqual([]);
  });
});

describe("the editor's placeholder", () => {
  it('is a query over the instance’s own first table and columns, so it runs when pasted', () => {
    expect(exampleQuery(SHOP)).toMatch(/^[a-z_]+ \{ [a-z_]+ [a-z_]+ \} LIMIT 10$/);
    const [table, ...fields] = exampleQuery(SHOP)
      .replace(/[{}]|LIMIT 10/g, '')
      .split(/\s+/);
    const first = [...(SHOP.tables ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1))[0];
    expect(table).toBe(first?.name);
    expect(fields.filter(Boolean)).toEqual(first?.columns?.slice(0, 2).map((c) => c.name));
    expect(exampleQuery({ tables: [{ name: 'events', columns: [{ name: 'id' }] }] })).toBe(
      'events { id } LIMIT 10',
    );
    expect(exampleQuery(undefined)).toBe('<table> { <field> <field> } LIMIT 10');
  });
});
