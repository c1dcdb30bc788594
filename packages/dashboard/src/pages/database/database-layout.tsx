import { getV1DatabasesById } from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { Link, NavLink, Outlet, useOutletContext, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { StatusBadge } from '../../components/bits.tsx';
import { Page, QueryState } from '../../components/page.tsx';

export type Database = Awaited<ReturnType<typeof loadDatabase>>;

function loadDatabase(id: string) {
  return unwrap(getV1DatabasesById({ client: api, path: { id } }));
}

/** The database every tab shows; polled so its status stays current. */
export function useDatabaseQuery(id: string) {
  return useQuery({
    queryKey: ['database', id],
    queryFn: () => loadDatabase(id),
    refetchInterval: 5000,
  });
}

const TABS = [
  { to: '', label: 'Overview', end: true },
  { to: 'config', label: 'Schema config' },
  { to: 'builds', label: 'Builds' },
  { to: 'logs', label: 'Logs' },
  { to: 'metrics', label: 'Metrics' },
  { to: 'keys', label: 'API keys' },
  { to: 'webhooks', label: 'Webhooks' },
  { to: 'audit', label: 'Audit log' },
];

/** One database: its name and status, tabs for its parts, and the chosen tab. */
export function DatabaseLayout() {
  const { databaseId } = useParams() as { databaseId: string };
  const database = useDatabaseQuery(databaseId);
  if (!database.data) {
    return (
      <Page title="Database">
        <QueryState query={database} what="the database" />
      </Page>
    );
  }
  return (
    <Page
      title={database.data.name}
      actions={
        <>
          <StatusBadge status={database.data.status} />
          <Link className="button" to={`/query?database=${databaseId}`}>
            Query playground
          </Link>
        </>
      }
    >
      <nav className="tabs" aria-label="Database">
        {TABS.map((tab) => (
          <NavLink key={tab.to} to={tab.to} end={tab.end ?? false}>
            {tab.label}
          </NavLink>
        ))}
      </nav>
      <Outlet context={database.data} />
    </Page>
  );
}

/** The database of the tab being shown (inside DatabaseLayout). */
export function useDatabase(): Database {
  return useOutletContext<Database>();
}
