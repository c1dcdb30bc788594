import { InstanceActions } from '../../components/instance-actions.tsx';
import { InstanceNotifications } from '../../components/instance-notifications.tsx';
import { useInstanceStatus } from '../../components/instance-queries.ts';
import { InstanceRowCounts, InstanceSummary } from '../../components/instance-summary.tsx';
import { QueryState } from '../../components/page.tsx';
import { useDatabase } from './database-layout.tsx';
import './operations.css';

/** A database's live state (polled every few seconds), its actions and its notifications. */
export function OverviewTab() {
  const database = useDatabase();
  const status = useInstanceStatus(database.id);
  if (!status.data) return <QueryState query={status} what="the instance status" />;
  return (
    <div className="stack">
      {/* A failed poll keeps the last answer on screen, marked as possibly stale. */}
      {status.error && (
        <p className="notice notice-warn" role="alert">
          Could not refresh the status; showing the last answer.
        </p>
      )}
      <div className="grid-2">
        <InstanceSummary status={status.data} />
        <InstanceActions status={status.data} />
      </div>
      <div className="grid-2">
        <InstanceRowCounts status={status.data} />
        <InstanceNotifications databaseId={database.id} />
      </div>
    </div>
  );
}
