import { useState } from 'react';
import type { SchemaIntrospection } from './connection-queries.ts';
import { TextField } from './fields.tsx';

type Table = SchemaIntrospection['tables'][number];

const KEY_NAMES: Record<string, string> = {
  PRI: 'primary',
  UNI: 'unique',
  MUL: 'indexed',
};

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function TableDetails(props: {
  table: Table;
  listed: boolean;
  /** Undefined when the config cannot take a table now (invalid JSON, read-only). */
  onAdd: (() => void) | undefined;
  addReason: string | undefined;
}) {
  const { table } = props;
  return (
    <details className="schema-table">
      <summary>
        <span className="schema-table-name">{table.name}</span>{' '}
        <span className="muted">
          {plural(table.columns.length, 'column')}
          {table.relations.length > 0 ? `, ${plural(table.relations.length, 'relation')}` : ''}
        </span>
        {props.listed && <span className="badge badge-good">in config</span>}
      </summary>
      <div className="table-wrap">
        <table className="table schema-columns">
          <caption className="visually-hidden">Columns of {table.name}</caption>
          <thead>
            <tr>
              <th scope="col">Column</th>
              <th scope="col">Type</th>
              <th scope="col">Nullable</th>
              <th scope="col">Key</th>
            </tr>
          </thead>
          <tbody>
            {table.columns.map((column) => (
              <tr key={column.name}>
                <th scope="row">
                  <code>{column.name}</code>
                </th>
                <td>
                  <code>{column.type}</code>
                </td>
                <td>{column.nullable ? 'yes' : 'no'}</td>
                <td>
                  {column.key ? (
                    <abbr title={KEY_NAMES[column.key] ?? column.key}>{column.key}</abbr>
                  ) : (
                    ''
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {table.relations.length > 0 && (
        <div>
          <h4 className="schema-subhead">Relations (foreign keys)</h4>
          <ul className="schema-relations">
            {table.relations.map((relation) => (
              <li key={`${relation.constraintName}/${relation.column}`}>
                <code>{relation.column}</code> → <code>{relation.referencedTable}</code>.
                <code>{relation.referencedColumn}</code>{' '}
                <span className="muted">
                  (in the API: <code>{relation.derivedName}</code>)
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <button
        type="button"
        className="button button-small"
        onClick={props.onAdd}
        disabled={props.onAdd === undefined || props.listed}
        title={props.listed ? 'Already listed in the config.' : props.addReason}
      >
        Add {table.name} to config
      </button>
    </details>
  );
}

/**
 * The source's tables as introspected: columns (type, nullable, key) and foreign keys. A table
 * can be added to the config's `tables` list.
 */
export function SchemaBrowser(props: {
  schema: SchemaIntrospection;
  listed: Set<string> | undefined;
  onAdd: ((table: string) => void) | undefined;
  addReason: string | undefined;
}) {
  const [filter, setFilter] = useState('');
  const needle = filter.trim().toLowerCase();
  const tables = props.schema.tables.filter((table) => table.name.toLowerCase().includes(needle));
  const { onAdd } = props;
  return (
    <div className="schema-browser stack">
      <p className="muted schema-note">
        {plural(props.schema.tables.length, 'table')}.{' '}
        {props.listed === undefined
          ? 'The config has no tables list, so every table is served; adding one makes the list, and only listed tables are served.'
          : 'Only the tables listed in the config are served.'}
      </p>
      {props.schema.tables.length > 8 && (
        <TextField
          label="Filter tables"
          type="search"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
      )}
      {tables.length === 0 ? (
        <p className="muted">
          {props.schema.tables.length === 0
            ? 'The source schema has no base tables.'
            : 'No table matches.'}
        </p>
      ) : (
        <div className="schema-tables">
          {tables.map((table) => (
            <TableDetails
              key={table.name}
              table={table}
              listed={props.listed?.has(table.name) ?? false}
              onAdd={onAdd && (() => onAdd(table.name))}
              addReason={props.addReason}
            />
          ))}
        </div>
      )}
    </div>
  );
}
