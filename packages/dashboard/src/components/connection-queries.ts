import {
  type GetV1ConnectionsByIdResponse,
  type GetV1DatabasesByIdResponse,
  type GetV1DatabasesByIdSchemaResponse,
  getV1Connections,
  getV1ConnectionsById,
  getV1Databases,
  getV1DatabasesByIdSchema,
  type PostV1ConnectionsTestConnectionResponse,
} from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

export type Connection = GetV1ConnectionsByIdResponse;
export type Backend = Connection['backend'];
export type TlsMode = Connection['tlsMode'];
export type Region = Connection['defaultRegion'];
export type DatabaseRecord = GetV1DatabasesByIdResponse;
export type TestResult = PostV1ConnectionsTestConnectionResponse;
export type SchemaIntrospection = GetV1DatabasesByIdSchemaResponse;

export const BACKEND_LABELS: Record<Backend, string> = {
  mysql: 'MySQL / MariaDB',
  postgres: 'PostgreSQL',
  mssql: 'SQL Server',
};

export const DEFAULT_PORTS: Record<Backend, number> = { mysql: 3306, postgres: 5432, mssql: 1433 };

/** Query keys shared by the connection and database pages (invalidated after writes). */
export const keys = {
  connections: ['connections'] as const,
  connection: (id: string) => ['connection', id] as const,
  databases: ['databases'] as const,
  database: (id: string) => ['database', id] as const,
  schema: (databaseId: string) => ['database-schema', databaseId] as const,
  /** Schemas a successful test listed, kept for the new-database form of this session. */
  testedSchemas: (connectionId: string) => ['connection-tested-schemas', connectionId] as const,
};

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

/** Why a member's write buttons are disabled (members read; admins and owners write). */
export const MEMBER_REASON = 'Members have read-only access; ask an admin or owner.';
