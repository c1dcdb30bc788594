import { useQuery } from '@tanstack/react-query';
import { keyPrefix } from './query-key-store.ts';

interface SchemaDocument {
  tables?: Array<{ name: string; columns?: Array<{ name: string }> }>;
}

/** The instance's own `GET /schema` (with the key), so the user sees what can be queried. */
async function loadSchema(instanceUrl: string, apiKey: string): Promise<SchemaDocument> {
  const response = await fetch(`${instanceUrl.replace(/\/+$/, '')}/schema`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as SchemaDocument;
}

/** The instance's tables; picking one starts a query over it. Quiet when it cannot load. */
export function QueryTables(props: {
  instanceUrl: string;
  apiKey: string;
  onPick: (query: string) => void;
}) {
  const schema = useQuery({
    // The key's id names it in the cache; the secret part stays out of it.
    queryKey: ['instance-schema', props.instanceUrl, keyPrefix(props.apiKey)],
    queryFn: () => loadSchema(props.instanceUrl, props.apiKey),
    // A key made moments ago reaches the instance within a second or so.
    retry: 4,
    retryDelay: 1000,
    staleTime: 60_000,
  });
  const tables = schema.data?.tables ?? [];
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
