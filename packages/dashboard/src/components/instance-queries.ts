import {
  getV1DatabasesByIdBuilds,
  getV1DatabasesByIdInstance,
  getV1DatabasesByIdNotifications,
} from '@replix/client';
import { type QueryClient, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';

function loadInstanceStatus(id: string) {
  return unwrap(getV1DatabasesByIdInstance({ client: api, path: { id } }));
}

export type InstanceStatus = Awaited<ReturnType<typeof loadInstanceStatus>>;
export type ActionName = keyof InstanceStatus['allowedActions'];
export type Build = Awaited<ReturnType<typeof loadBuilds>>[number];

/** The dashboard's polling view of one database: status, instance, allowed actions, goal. */
export function useInstanceStatus(id: string) {
  const client = useQueryClient();
  return useQuery({
    queryKey: ['database', id, 'instance'],
    queryFn: async () => {
      const status = await loadInstanceStatus(id);
      // The answer carries the database too: the page header (polled more slowly) keeps in step.
      // It leaves out the schema config, so it is laid over the full record, never replaces it
      // (a replaced one showed "undefined" in the Schema config tab and blocked Save changes).
      client.setQueryData(['database', id], (full: object | undefined) =>
        full ? { ...full, ...status.database } : undefined,
      );
      return status;
    },
    refetchInterval: 2500,
  });
}

function loadBuilds(id: string) {
  return unwrap(getV1DatabasesByIdBuilds({ client: api, path: { id } }));
}

/** The database's builds, newest first; polled faster while one is queued or running. */
export function useBuilds(id: string) {
  return useQuery({
    queryKey: ['database', id, 'builds'],
    queryFn: () => loadBuilds(id),
    refetchInterval: (query) =>
      query.state.data?.some((build) => build.status === 'queued' || build.status === 'in_progress')
        ? 2000
        : 10_000,
  });
}

export function useNotifications(id: string) {
  return useQuery({
    queryKey: ['database', id, 'notifications'],
    queryFn: () => unwrap(getV1DatabasesByIdNotifications({ client: api, path: { id } })),
    refetchInterval: 5000,
  });
}

/** After an action: everything that shows the database's state may have changed. */
export function invalidateDatabase(client: QueryClient, id: string): Promise<unknown> {
  // Every per-database key of these tabs starts with ['database', id] (shared with the query page).
  return Promise.all([
    client.invalidateQueries({ queryKey: ['database', id] }),
    client.invalidateQueries({ queryKey: ['databases'] }),
  ]);
}

/** Instance sizes, smallest first (docs/control-plane/billing.md). */
export const INSTANCE_SIZES = ['xs', 's', 'm', 'l', 'xl'] as const;
export type InstanceSize = (typeof INSTANCE_SIZES)[number];

export { formatSeconds } from './durations.ts';
