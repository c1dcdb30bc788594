import type { Completion, CompletionSource } from '@codemirror/autocomplete';
import type { InstanceSchema } from '../components/instance-schema.ts';
import { type Expected, expectedAt } from './query-context.ts';
import { editorTokens } from './query-tokens.ts';

/** A name the lexer reads as one unquoted name; any other is written `"quoted"`. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function written(name: string): string {
  return PLAIN_NAME.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function options(schema: InstanceSchema, expected: Expected): Completion[] {
  const tables = schema.tables ?? [];
  if (expected.kind === 'table') {
    return tables.map((table) => ({ label: written(table.name), type: 'class', detail: 'table' }));
  }
  if (expected.kind === 'groupKey') {
    return [
      ...expected.fields.map((key) => ({
        label: written(key),
        type: 'property',
        detail: 'group key',
      })),
      ...expected.aggregates.map((key) => ({ label: key, type: 'variable', detail: 'aggregate' })),
    ];
  }
  if (expected.kind !== 'field') return [];
  const table = tables.find((candidate) => candidate.name === expected.table);
  const fields: Completion[] = (table?.columns ?? []).map((column) => ({
    label: written(column.name),
    type: 'property',
    ...(column.type ? { detail: column.type } : {}),
  }));
  const relations: Completion[] = (table?.relations ?? [])
    .filter((relation) => expected.relations === 'all' || relation.kind === 'to-one')
    .filter(() => expected.relations !== 'none')
    .map((relation) => ({
      label: written(relation.name),
      type: 'namespace',
      detail: `${relation.kind ?? 'relation'} → ${relation.table}`,
    }));
  return [...fields, ...relations, ...(expected.also ? EXTRAS[expected.also] : [])];
}

/** Aggregates in a selection, DISTINCT in COUNT(. */
const EXTRAS: Record<'aggregates' | 'distinct', Completion[]> = {
  aggregates: [
    { label: 'COUNT(*)', type: 'function', detail: 'aggregate: rows' },
    ...['COUNT', 'SUM', 'AVG', 'MIN', 'MAX'].map((fn) => ({
      label: fn,
      apply: `${fn}(`,
      type: 'function',
      detail: 'aggregate',
    })),
  ],
  distinct: [{ label: 'DISTINCT', type: 'keyword', detail: 'distinct values' }],
};

/**
 * Completes tables, fields, relations and aggregates from the instance's `/schema`, and a
 * grouped selection's keys in HAVING and ORDER BY, for the spot the cursor is in
 * (query-context.ts). While typing it offers names once a word is started or right after
 * a `.`; Ctrl+Space asks anywhere.
 */
export function queryCompletion(schema: InstanceSchema): CompletionSource {
  return (context) => {
    const text = context.state.doc.toString();
    const { from, expected } = expectedAt(editorTokens(text), context.pos, schema);
    const afterDot = text[from - 1] === '.';
    if (from === context.pos && !context.explicit && !afterDot) return null;
    const found = options(schema, expected);
    return found.length === 0 ? null : { from, options: found, validFor: PLAIN_NAME };
  };
}
