import type { TestInstance } from '../instance-helpers.ts';
import type { Canonical } from './canonical-value.ts';
import { type CanonicalRow, type RealSource, rowKey, type SourceTable } from './real-source.ts';
import { servedQuery } from './served-query.ts';
import { type ServedTable, servedSchema, timestampColumns } from './served-schema.ts';

/** What a full comparison covered, and every way the instance differed from the source. */
export interface TableComparison {
  tables: number;
  rows: number;
  values: number;
  /** Readable lines, at most `MAX_PER_TABLE` per table; empty when exact. */
  differences: string[];
}

const MAX_PER_TABLE = 5;

function show(value: Canonical | undefined): string {
  return value === undefined ? '(absent)' : JSON.stringify(value);
}

/** Every value of `sourceRows` against `servedRows`, both keyed by primary key. */
function compareRows(
  table: SourceTable,
  sourceRows: Map<string, CanonicalRow>,
  servedRows: Map<string, CanonicalRow>,
  result: TableComparison,
): void {
  const found: string[] = [];
  let differing = 0;
  const note = (line: string) => {
    differing += 1;
    if (found.length < MAX_PER_TABLE) found.push(`${table.name} ${line}`);
  };
  for (const [key, sourceRow] of sourceRows) {
    const servedRow = servedRows.get(key);
    result.rows += 1;
    if (!servedRow) {
      note(`${key}: row missing from the instance`);
      continue;
    }
    for (const column of table.columns) {
      result.values += 1;
      const want = sourceRow[column.name];
      const got = servedRow[column.name];
      if (JSON.stringify(want) !== JSON.stringify(got)) {
        note(`${key}.${column.name} (${column.type}): source ${show(want)}, served ${show(got)}`);
      }
    }
  }
  for (const key of servedRows.keys()) {
    if (!sourceRows.has(key)) note(`${key}: row served but not in the source`);
  }
  if (differing > found.length) found.push(`${table.name}: … ${differing} differences in all`);
  result.differences.push(...found);
}

/**
 * Reads every served table of `tables` in full from the instance and from the source and
 * compares every value exactly.
 */
export async function compareEveryValue(
  source: RealSource,
  served: TestInstance,
  tables: readonly SourceTable[],
): Promise<TableComparison> {
  const schema: ServedTable[] = await servedSchema(served);
  const timestamps = timestampColumns(schema);
  const result: TableComparison = { tables: 0, rows: 0, values: 0, differences: [] };
  for (const table of tables) {
    result.tables += 1;
    if (!schema.some((servedTable) => servedTable.name === table.name)) {
      result.differences.push(`${table.name}: not served`);
      continue;
    }
    const answer = await servedQuery(served, `${table.name} { * } LIMIT 1000000`, timestamps);
    const servedRows = new Map(
      answer.rows.map((row) => {
        const values = row as CanonicalRow;
        return [rowKey(values, table.primaryKey), values];
      }),
    );
    compareRows(table, await source.tableRows(table), servedRows, result);
  }
  return result;
}
