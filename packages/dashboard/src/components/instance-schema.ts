import { useQuery } from '@tanstack/react-query';
import { keyPrefix } from './query-key-store.ts';

/** The instance's `GET /schema` document, as far as the playground reads it (docs/instance-api.md). */
export interface InstanceSchema {
  tables?: SchemaTable[];
}

export interface SchemaTable {
  name: string;
  columns?: Array<{ name: string; type?: string }>;
  relations?: Array<{ name: string; kind?: 'to-one' | 'to-many'; table: string }>;
}

async function loadSchema(instanceUrl: string, apiKey: string): Promise<InstanceSchema> {
  const response = await fetch(`${instanceUrl.replace(/\/+$/, '')}/schema`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return (await response.json()) as InstanceSchema;
}

/** The instance's own schema, read with the playground's key (once for the table list and the editor). */
export function useInstanceSchema(instanceUrl: string, apiKey: string | null) {
  return useQuery({
    // The key's id names it in the cache; the secret part stays out of it.
    queryKey: ['instance-schema', instanceUrl, apiKey ? keyPrefix(apiKey) : null],
    queryFn: () => loadSchema(instanceUrl, apiKey ?? ''),
    enabled: apiKey !== null,
    // A key made moments ago reaches the instance within a second or so.
    retry: 4,
    retryDelay: 1000,
    staleTime: 60_000,
  });
}
