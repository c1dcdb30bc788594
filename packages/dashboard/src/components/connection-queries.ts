import {
  type GetV1ConnectionsByIdResponse,
  type GetV1DatabasesByIdResponse,
  type GetV1DatabasesByIdSchemaResponse,
  getV1Connections,
  getV1ConnectionsById,
  getV1ConnectionsByIdSchema,
  getV1Databases,
  getV1DatabasesByIdSchema,
  type PostV1ConnectionsTestConnectionResponse,
  postV1ConnectionsByIdTest,
} from '@replix/client';
import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

export type Connection = GetV1ConnectionsByIdResponse;
export type Backend = Connection['backend'];
export type TlsMode = Connection['tlsMode'];
export type Region = Connection['defaultRegion'];
export type DatabaseRecord = GetV1DatabasesByIdResponse;
export type TestResult = PostV1ConnectionsTestConnectionResponse;
export type SchemaIntrospection = GetV1DatabasesByIdSchemaResponse;

/** Query keys shared by the connection and database pages (invalidated after writes). */
export const keys = {
  connections: ['connections'] as const,
  connection: (id: string) => ['connection', id] as const,
  databases: ['databases'] as const,
  database: (id: string) => ['database', id] as const,
  schema: (databaseId: string) => ['database-schema', databaseId] as const,
  /** The last test of a saved connection (or of its settings just before saving it). */
  savedTest: (connectionId: string) => ['connection-test', connectionId] as const,
  /** A source schema read through a connection, before a database exists. */
  connectionSchema: (connectionId: string, sourceSchema: string) =>
    ['connection-schema', connectionId, sourceSchema] as const,
};

/** Drops what was read live through a connection (its test, its schemas) after it changed. */
export function forgetConnectionReads(queryClient: QueryClient, connectionId: string): void {
  queryClient.removeQueries({ queryKey: keys.savedTest(connectionId) });
  queryClient.removeQueries({ queryKey: ['connection-schema', connectionId] });
}

export function useConnections() {
  return useQuery({
    queryKey: keys.connections,
    queryFn: () => unwrap(getV1Connections({ client: api })),
  });
}

export function useConnection(id: string) {
  return useQuery({
    queryKey: keys.connection(id),
    queryFn: () => unwrap(getV1ConnectionsById({ client: api, path: { id } })),
  });
}

/** Every database of the account; `poll` keeps statuses current on list pages. */
export function useDatabases(options: { poll?: boolean } = {}) {
  return useQuery({
    queryKey: keys.databases,
    queryFn: () => unwrap(getV1Databases({ client: api })),
    refetchInterval: options.poll ? 5000 : false,
  });
}

/**
 * The source tables of a saved database, read live from the source (slow, may fail with 502
 * source_unavailable), so it is asked once and then only on demand.
 */
export function useSchemaIntrospection(databaseId: string | undefined) {
  return useQuery({
    queryKey: keys.schema(databaseId ?? ''),
    queryFn: () =>
      unwrap(getV1DatabasesByIdSchema({ client: api, path: { id: databaseId ?? '' } })),
    enabled: databaseId !== undefined,
    staleTime: 5 * 60_000,
    retry: false,
  });
}

function savedTest(connectionId: string, database: string) {
  return unwrap(
    postV1ConnectionsByIdTest({
      client: api,
      path: { id: connectionId },
      body: database === '' ? {} : { database },
    }),
  );
}

/**
 * "Test again" on a saved connection: the API uses the stored (sealed) credentials, so nothing
 * secret is typed in. The answer also becomes the connection's cached test, whose schema list
 * the new-database form suggests.
 */
export function useSavedConnectionRetest(connectionId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (database: string) => savedTest(connectionId, database),
    onSuccess: (result) => {
      queryClient.setQueryData(keys.savedTest(connectionId), result);
      // The test is kept as the connection's lastTest.
      void queryClient.invalidateQueries({ queryKey: keys.connection(connectionId) });
    },
  });
}

/**
 * The saved connection's test with its default login database, asked once per connection and
 * kept a few minutes (it connects to the source). Only admins may run it.
 */
export function useSavedConnectionTest(connectionId: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: keys.savedTest(connectionId ?? ''),
    queryFn: () => savedTest(connectionId ?? '', ''),
    enabled: enabled && Boolean(connectionId),
    staleTime: 5 * 60_000,
    retry: false,
  });
}

/** A source schema's tables read live through a saved connection (502 when unreadable). */
export function useConnectionSchema(connectionId: string | undefined, sourceSchema: string) {
  return useQuery({
    queryKey: keys.connectionSchema(connectionId ?? '', sourceSchema),
    queryFn: () =>
      unwrap(
        getV1ConnectionsByIdSchema({
          client: api,
          path: { id: connectionId ?? '' },
          query: { sourceSchema },
        }),
      ),
    enabled: Boolean(connectionId) && sourceSchema !== '',
    staleTime: 5 * 60_000,
    retry: false,
  });
}

/**
 * Source schemas to suggest for a new database on a connection: what the connection's test
 * found its user can read, plus the schemas its databases already serve.
 */
export function schemaSuggestions(
  connectionId: string | undefined,
  tested: TestResult | undefined,
  databases: DatabaseRecord[] | undefined,
): string[] {
  if (!connectionId) return [];
  const served = databases?.filter((db) => db.connectionId === connectionId) ?? [];
  const names = new Set([
    ...(tested?.ok ? (tested.availableSchemas ?? []) : []),
    ...served.map((db) => db.sourceSchema),
  ]);
  return [...names].sort();
}
