import { SchemaConfigError } from '../errors.ts';
import type { SourceSchema, SourceTable } from '../source-schema.ts';
import type {
  CompiledColumn,
  CompiledRelation,
  CompiledSchema,
  CompiledTable,
} from './compiled-schema.ts';
import { type SchemaConfig, VIEW_REFRESH_DEFAULT_S } from './schema-config-schema.ts';
import { unknownTableMessage } from './unknown-table-message.ts';

type Issue = { path: string; message: string };

interface DraftRelation {
  generatedName: string;
  fallbackName: string;
  kind: 'forward' | 'reverse';
  ownerSource: string;
  targetSource: string;
  localColumns: readonly string[];
  targetColumns: readonly string[];
  constraintName: string;
}

const isBaseTable = (table: SourceTable) => (table.kind ?? 'table') === 'table';

/** `customer_id` → `customer`; any other column list names the relation after `fallback`. */
export function forwardName(columns: readonly string[], fallback: string): string {
  const only = columns.length === 1 ? columns[0] : undefined;
  if (only && /_id$/i.test(only) && only.length > 3) return only.slice(0, -3);
  return fallback;
}

function selectColumns(
  table: SourceTable,
  entry: SchemaConfig['tables'] extends (infer T)[] | undefined ? T | undefined : never,
  path: string,
  issues: Issue[],
): string[] {
  const all = table.columns.map((column) => column.name);
  const include = entry?.columns?.include;
  const exclude = entry?.columns?.exclude;
  for (const [key, list] of [
    ['include', include],
    ['exclude', exclude],
  ] as const) {
    list?.forEach((name, index) => {
      if (!all.includes(name)) {
        issues.push({
          path: `${path}.columns.${key}[${index}]`,
          message: `table "${table.name}" has no column "${name}"`,
        });
      }
    });
  }
  let selected = include ? all.filter((name) => include.includes(name)) : all;
  if (exclude) selected = selected.filter((name) => !exclude.includes(name));
  // The primary key identifies rows for indexes, relations and change capture: always kept.
  for (const key of table.primaryKey) if (!selected.includes(key)) selected.push(key);
  return all.filter((name) => selected.includes(name));
}

/**
 * Applies a schema config to an introspected source schema: selects tables and columns, names
 * relations (forward: FK column minus `_id`; reverse: the referencing table; on a collision
 * `<other table>_by_<fk columns>`), applies `field_aliases`, and resolves every name the API
 * will use. Throws `SchemaConfigError` naming each config key that does not fit the source.
 */
export function compileSchema(source: SourceSchema, config: SchemaConfig): CompiledSchema {
  const issues: Issue[] = [];
  const views = source.views ?? [];
  // Views are served only when the config names them; the default is every base table.
  const sourceTables = new Map([...source.tables, ...views].map((table) => [table.name, table]));
  const entries = config.tables ?? source.tables.map((table) => ({ name: table.name }));
  const selected = new Map<string, { table: SourceTable; columns: string[]; index: number }>();
  config.tables?.forEach((entry, index) => {
    const table = sourceTables.get(entry.name);
    if (!table) {
      issues.push({
        path: `tables[${index}].name`,
        message: unknownTableMessage(entry.name, source.tables, views),
      });
    } else if (table.populated === false) {
      issues.push({
        path: `tables[${index}].name`,
        message: `the materialized view "${entry.name}" has never been populated: run REFRESH MATERIALIZED VIEW on the source first`,
      });
    } else if (entry.refresh_interval !== undefined && isBaseTable(table)) {
      issues.push({
        path: `tables[${index}].refresh_interval`,
        message: `"${entry.name}" is a table, which follows the change stream: only a view is re-read at an interval`,
      });
    }
  });
  entries.forEach((entry, index) => {
    const table = sourceTables.get(entry.name);
    if (!table) return;
    const configEntry = config.tables?.[index];
    selected.set(table.name, {
      table,
      columns: selectColumns(table, configEntry, `tables[${index}]`, issues),
      index,
    });
  });

  // Relations between selected tables whose key columns are all selected.
  const drafts = new Map<string, DraftRelation[]>();
  for (const name of selected.keys()) drafts.set(name, []);
  for (const { table, columns } of selected.values()) {
    for (const fk of table.foreignKeys) {
      const target = selected.get(fk.referencedTable);
      if (!target) continue;
      if (!fk.columns.every((c) => columns.includes(c))) continue;
      if (!fk.referencedColumns.every((c) => target.columns.includes(c))) continue;
      const fkColumns = fk.columns.join('_');
      drafts.get(table.name)?.push({
        generatedName: forwardName(fk.columns, fk.referencedTable),
        fallbackName: `${fk.referencedTable}_by_${fkColumns}`,
        kind: 'forward',
        ownerSource: table.name,
        targetSource: fk.referencedTable,
        localColumns: fk.columns,
        targetColumns: fk.referencedColumns,
        constraintName: fk.name,
      });
      drafts.get(fk.referencedTable)?.push({
        generatedName: table.name,
        fallbackName: `${table.name}_by_${fkColumns}`,
        kind: 'reverse',
        ownerSource: fk.referencedTable,
        targetSource: table.name,
        localColumns: fk.referencedColumns,
        targetColumns: fk.columns,
        constraintName: fk.name,
      });
    }
  }

  const aliases = new Map(Object.entries(config.field_aliases ?? {}));
  const usedAliases = new Set<string>();
  const alias = (key: string, name: string) => {
    const renamed = aliases.get(key);
    if (renamed === undefined) return name;
    usedAliases.add(key);
    return renamed;
  };
  const tableApiName = new Map<string, string>();
  for (const name of selected.keys()) tableApiName.set(name, alias(name, name));

  const tables: CompiledTable[] = [];
  for (const { table, columns, index: entryIndex } of selected.values()) {
    const apiName = tableApiName.get(table.name) ?? table.name;
    const compiledColumns: CompiledColumn[] = columns.map((columnName, index) => {
      const column = table.columns.find((c) => c.name === columnName);
      if (!column) throw new Error(`column ${columnName} vanished`);
      return {
        name: alias(`${table.name}.${column.name}`, column.name),
        sourceName: column.name,
        type: column.type,
        nullable: column.nullable,
        sourceType: column.sourceType,
        scale: column.scale,
        precision: column.precision,
        ...(column.elementType !== undefined ? { elementType: column.elementType } : {}),
        index,
      };
    });
    const columnIndex = (name: string) => columns.indexOf(name);

    // A generated name that collides with a column or another relation takes its `_by_` form.
    const own = drafts.get(table.name) ?? [];
    const counts = new Map<string, number>();
    for (const draft of own) {
      counts.set(draft.generatedName, (counts.get(draft.generatedName) ?? 0) + 1);
    }
    const sourceColumnNames = new Set(columns);
    const relations: CompiledRelation[] = own.map((draft) => {
      const collides =
        (counts.get(draft.generatedName) ?? 0) > 1 || sourceColumnNames.has(draft.generatedName);
      const generated = collides ? draft.fallbackName : draft.generatedName;
      const target = selected.get(draft.targetSource);
      return {
        name: alias(`${table.name}.${generated}`, generated),
        kind: draft.kind,
        target: tableApiName.get(draft.targetSource) ?? draft.targetSource,
        localColumns: draft.localColumns.map(columnIndex),
        targetColumns: draft.targetColumns.map((c) => target?.columns.indexOf(c) ?? -1),
        constraintName: draft.constraintName,
      };
    });

    const fieldNames = new Set<string>();
    for (const field of [...compiledColumns.map((c) => c.name), ...relations.map((r) => r.name)]) {
      if (fieldNames.has(field)) {
        issues.push({
          path: 'field_aliases',
          message: `table "${apiName}" would have two fields named "${field}"`,
        });
      }
      fieldNames.add(field);
    }

    const entry = config.tables?.[entryIndex];
    let where = entry?.where;
    let whereColumns = entry?.where_columns;
    if (!where && config.where && config.where_columns?.every((c) => columns.includes(c))) {
      where = config.where;
      whereColumns = config.where_columns;
    }
    whereColumns?.forEach((name, index) => {
      if (!columns.includes(name)) {
        issues.push({
          path: `tables[${entryIndex}].where_columns[${index}]`,
          message: `table "${table.name}" has no selected column "${name}"`,
        });
      }
    });

    tables.push({
      name: apiName,
      sourceName: table.name,
      kind: table.kind ?? 'table',
      refreshIntervalS: isBaseTable(table)
        ? null
        : (entry?.refresh_interval ?? VIEW_REFRESH_DEFAULT_S),
      columns: compiledColumns,
      columnsByName: new Map(compiledColumns.map((c) => [c.name, c])),
      primaryKey: table.primaryKey.map(columnIndex),
      relations,
      relationsByName: new Map(relations.map((r) => [r.name, r])),
      where,
      whereColumns,
    });
  }

  for (const key of aliases.keys()) {
    if (!usedAliases.has(key)) {
      issues.push({
        path: `field_aliases.${key}`,
        message: `no selected table, column or relation is named "${key}"`,
      });
    }
  }
  const apiNames = new Set<string>();
  for (const table of tables) {
    if (apiNames.has(table.name)) {
      issues.push({ path: 'field_aliases', message: `two tables would be named "${table.name}"` });
    }
    apiNames.add(table.name);
  }
  if (issues.length > 0) throw new SchemaConfigError(issues);

  tables.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { tables, tablesByName: new Map(tables.map((t) => [t.name, t])), config, source };
}
