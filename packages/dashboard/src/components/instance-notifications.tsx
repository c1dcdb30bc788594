import { postV1DatabasesByIdNotificationsSeen } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api.ts';
import { Time } from './bits.tsx';
import { useNotifications } from './instance-queries.ts';
import { Empty, ErrorNotice, Panel, QueryState } from './page.tsx';

const SEVERITY_TONES = { success: 'good', error: 'bad', info: 'neutral' } as const;

/** The database's unseen notifications: what happened lately, until someone has seen it. */
export function InstanceNotifications(props: { databaseId: string }) {
  const id = props.databaseId;
  const queryClient = useQueryClient();
  const notifications = useNotifications(id);
  const markSeen = useMutation({
    // No ids: every unseen one but the sticky failures (they are dismissed one by one).
    mutationFn: (ids?: string[]) =>
      unwrap(
        postV1DatabasesByIdNotificationsSeen({
          client: api,
          path: { id },
          body: ids ? { ids } : {},
        }),
      ),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ['database', id, 'notifications'] }),
        queryClient.invalidateQueries({ queryKey: ['database', id, 'instance'] }),
      ]),
  });

  const data = notifications.data;
  const unseen = data?.unseenCount ?? 0;
  // "Mark all seen" leaves sticky failures; with nothing else to clear it would do nothing.
  const onlySticky = data
    ? data.skippedCount === 0 && data.notifications.every((item) => item.sticky)
    : true;
  return (
    <Panel
      title="Notifications"
      actions={
        <>
          {data && (
            <span
              className={`badge ${unseen > 0 ? 'badge-busy' : 'badge-neutral'}`}
              aria-live="polite"
            >
              {unseen} unseen
            </span>
          )}
          <button
            type="button"
            className="button button-small"
            disabled={unseen === 0 || onlySticky || markSeen.isPending}
            title={
              unseen === 0
                ? 'Nothing unseen.'
                : onlySticky
                  ? 'Failure notifications stay until dismissed one by one.'
                  : undefined
            }
            onClick={() => markSeen.mutate(undefined)}
          >
            Mark all seen
          </button>
        </>
      }
    >
      {!data && <QueryState query={notifications} what="notifications" />}
      {markSeen.error && <ErrorNotice error={markSeen.error} />}
      {data && data.skippedCount > 0 && (
        <p className="notice notice-info">
          {data.skippedCount} older notification{data.skippedCount > 1 ? 's were' : ' was'} skipped;
          see the <Link to="audit">audit log</Link>.
        </p>
      )}
      {data?.notifications.length === 0 && (
        <Empty title="No unseen notifications">
          Finished builds, failed deploys and health changes of this database show up here.
        </Empty>
      )}
      {data && data.notifications.length > 0 && (
        <ul className="ops-notifications">
          {data.notifications.map((item) => (
            <li key={item.id}>
              <span className={`badge badge-${SEVERITY_TONES[item.severity]}`}>
                {item.severity}
              </span>
              <div className="ops-notification-text">
                <p>
                  {item.message} <span className="muted ops-small">{item.eventType}</span>
                </p>
                {item.detail && <pre className="code-block">{item.detail}</pre>}
                <span className="muted ops-small">
                  <Time value={item.createdAt} />
                  {item.sticky && ' · stays until dismissed'}
                </span>
              </div>
              <button
                type="button"
                className="button button-small"
                disabled={markSeen.isPending}
                aria-label={`Dismiss: ${item.message}`}
                onClick={() => markSeen.mutate([item.id])}
              >
                Dismiss
              </button>
            </li>
          ))}
        </ul>
      )}
    </Panel>
  );
}
