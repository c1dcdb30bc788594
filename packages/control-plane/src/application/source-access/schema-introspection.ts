import {
  compileSchema,
  defaultSchemaConfig,
  forwardRelationName,
  type SourceSchema,
  type SourceTable,
  type SourceTableKind,
} from '@replix/engine';

/** The spec's schema introspection response (GET /databases/{id}/schema). */
export interface SchemaIntrospection {
  tables: {
    name: string;
    /** A view or materialized view is served only when the config names it, and re-read. */
    kind: SourceTableKind;
    columns: { name: string; type: string; nullable: boolean; key: string }[];
    relations: {
      column: string;
      derivedName: string;
      referencedTable: string;
      referencedColumn: string;
      constraintName: string;
    }[];
    /**
     * The to-many relations other tables' foreign keys give this one: `name` is what the
     * instance API calls it (the referencing table by default: `orders { order_items { … } }`).
     */
    reverseRelations: {
      name: string;
      fromTable: string;
      fromColumns: string[];
      constraintName: string;
    }[];
  }[];
}

/**
 * MySQL's COLUMN_KEY: `PRI` in the primary key, `UNI` the sole column of a unique key, `MUL`
 * the first column of a key that allows repeats (a multi-column unique key, or a foreign key,
 * which MySQL always indexes), '' otherwise. Derived the same way for every engine.
 */
function columnKey(table: SourceTable, column: string): string {
  if (table.primaryKey.includes(column)) return 'PRI';
  if (table.uniqueKeys.some((key) => key.length === 1 && key[0] === column)) return 'UNI';
  if (table.uniqueKeys.some((key) => key[0] === column)) return 'MUL';
  if (table.foreignKeys.some((fk) => fk.columns[0] === column)) return 'MUL';
  return '';
}

/**
 * The forward relation names an instance would give each foreign key with no schema config:
 * the engine's own compiler decides (collisions included), so the schema picker shows what
 * the API will have. If the compiler refuses the bare schema, the name before collision rules.
 */
function derivedNames(source: SourceSchema): Map<string, string> {
  const names = new Map<string, string>();
  try {
    const compiled = compileSchema(source, defaultSchemaConfig());
    for (const table of compiled.tables) {
      for (const relation of table.relations) {
        names.set(
          relationKey(table.sourceName, relation.kind, relation.constraintName),
          relation.name,
        );
      }
    }
  } catch {
    // Fall back below, per foreign key.
  }
  return names;
}

/** A relation of `table` by kind and constraint (a self-referencing key gives it both kinds). */
function relationKey(table: string, kind: 'forward' | 'reverse', constraint: string): string {
  return `${table}\u0000${kind}\u0000${constraint}`;
}

/**
 * Maps an introspected source schema to the spec's response, one relation per key column, and
 * each table's reverse relations: the base tables by name, then the views (which have no keys
 * or relations) by name.
 */
export function schemaIntrospection(source: SourceSchema): SchemaIntrospection {
  const names = derivedNames(source);
  return {
    tables: [...source.tables, ...(source.views ?? [])].map((table) => ({
      name: table.name,
      kind: table.kind ?? 'table',
      columns: table.columns.map((column) => ({
        name: column.name,
        type: column.sourceType,
        nullable: column.nullable,
        key: columnKey(table, column.name),
      })),
      relations: table.foreignKeys.flatMap((fk) => {
        const derivedName =
          names.get(relationKey(table.name, 'forward', fk.name)) ??
          forwardRelationName(fk.columns, fk.referencedTable);
        return fk.columns.map((column, index) => ({
          column,
          derivedName,
          referencedTable: fk.referencedTable,
          referencedColumn: fk.referencedColumns[index] ?? '',
          constraintName: fk.name,
        }));
      }),
      reverseRelations: source.tables.flatMap((from) =>
        from.foreignKeys
          .filter((fk) => fk.referencedTable === table.name)
          .map((fk) => ({
            name: names.get(relationKey(table.name, 'reverse', fk.name)) ?? from.name,
            fromTable: from.name,
            fromColumns: [...fk.columns],
            constraintName: fk.name,
          })),
      ),
    })),
  };
}
