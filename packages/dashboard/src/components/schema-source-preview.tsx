import { useEffect, useState } from 'react';
import { type Connection, useConnectionSchema } from './connection-queries.ts';
import type { SchemaSource } from './schema-workbench.tsx';

/** How long the source schema field must rest before its tables are read from the source. */
const SETTLE_MS = 600;

/** `value` once it has stopped changing for `ms` (each read connects to the source). */
function useSettled(value: string, ms: number): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * The schema browser's source before a database exists: the typed source schema read live
 * through the chosen saved connection (GET /v1/connections/{id}/schema).
 */
export function useConnectionSchemaSource(
  connection: Connection | undefined,
  sourceSchema: string,
): SchemaSource {
  const settled = useSettled(sourceSchema.trim(), SETTLE_MS);
  const query = useConnectionSchema(connection?.id, settled);
  if (!connection || settled === '') {
    return {
      unavailable: (
        <p>
          Name a source schema above: its tables, columns and foreign keys appear here, read live
          through the connection, with buttons that add tables to the config.
        </p>
      ),
    };
  }
  return {
    query,
    note: (
      <>
        <code>{settled}</code>, read live through the connection <strong>{connection.name}</strong>.
      </>
    ),
  };
}
