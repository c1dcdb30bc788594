import type { InstanceSchema } from '../components/instance-schema.ts';

/** What the editor shows before the schema is read, or for an instance without tables. */
const GENERIC_EXAMPLE = '<table> { <field> <field> } LIMIT 10';

/**
 * The editor's placeholder: a query that runs on this instance (its first table by name and
 * that table's first two columns), so pasting the example never fails on a name it lacks.
 */
export function exampleQuery(schema: InstanceSchema | undefined): string {
  const tables = [...(schema?.tables ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1));
  const table = tables.find((candidate) => (candidate.columns ?? []).length > 0);
  if (!table) return GENERIC_EXAMPLE;
  const fields = (table.columns ?? []).slice(0, 2).map((column) => column.name);
  return `${table.name} { ${fields.join(' ')} } LIMIT 10`;
}
