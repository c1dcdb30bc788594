import type { InstanceSchema } from './instance-schema.ts';

/** The instance's tables; picking one starts a query over it. Quiet while there are none. */
export function QueryTables(props: {
  schema: InstanceSchema | undefined;
  onPick: (query: string) => void;
}) {
  const tables = props.schema?.tables ?? [];
  if (tables.length === 0) return null;
  return (
    <div className="query-tables">
      <span className="muted" id="query-tables-title">
        Tables:
      </span>
      <ul aria-labelledby="query-tables-title">
        {tables.map((table) => (
          <li key={table.name}>
            <button
              type="button"
              className="button button-small"
              title={`Put “${table.name} { * } LIMIT 10” in the editor`}
              onClick={() => props.onPick(`${table.name} { * } LIMIT 10`)}
            >
              {table.name}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
