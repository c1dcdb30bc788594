import type { TestInstance } from '../instance-helpers.ts';

export interface ServedColumn {
  readonly name: string;
  readonly type: string;
}

export interface ServedRelation {
  readonly name: string;
  readonly kind: 'to-one' | 'to-many';
  readonly table: string;
}

export interface ServedTable {
  readonly name: string;
  readonly columns: readonly ServedColumn[];
  readonly relations: readonly ServedRelation[];
}

/** The instance's `GET /schema` tables. */
export async function servedSchema(served: TestInstance): Promise<ServedTable[]> {
  const response = await fetch(`${served.url}/schema`, {
    headers: { Authorization: `Bearer ${served.key}` },
  });
  if (response.status !== 200) throw new Error(`GET /schema: ${response.status}`);
  const body = (await response.json()) as { tables: ServedTable[] };
  return body.tables;
}

/** Names of served columns holding timestamps, whose text is compared as an instant. */
export function timestampColumns(tables: readonly ServedTable[]): Set<string> {
  const names = new Set<string>();
  for (const table of tables) {
    for (const column of table.columns) if (column.type === 'timestamp') names.add(column.name);
  }
  return names;
}
