import type { CompiledSchema } from '@replix/engine';

/**
 * The `GET /schema` document: tables, fields and relations under their API names.
 * `primaryKey` is set only on a column that is by itself the whole primary key, the only case
 * in which its values are unique. A view says so (`kind`, `refreshInterval` in seconds): it has
 * no primary key and no change stream, and is re-read at that interval.
 */
export function describeSchema(schema: CompiledSchema): object {
  return {
    tables: schema.tables.map((table) => ({
      name: table.name,
      ...(table.kind !== 'table'
        ? { kind: table.kind, refreshInterval: table.refreshIntervalS }
        : {}),
      columns: table.columns.map((column) => ({
        name: column.name,
        type: column.type,
        nullable: column.nullable,
        sourceType: column.sourceType,
        ...(column.elementType !== undefined ? { elementType: column.elementType } : {}),
        ...(table.primaryKey.length === 1 && table.primaryKey[0] === column.index
          ? { primaryKey: true }
          : {}),
      })),
      relations: table.relations.map((relation) => ({
        name: relation.name,
        kind: relation.kind === 'forward' ? 'to-one' : 'to-many',
        table: relation.target,
        columns: relation.localColumns.map((index) => table.columns[index]?.name),
        referencedColumns: relation.targetColumns.map(
          (index) => schema.tablesByName.get(relation.target)?.columns[index]?.name,
        ),
        constraintName: relation.constraintName,
      })),
    })),
  };
}
