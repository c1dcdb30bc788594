import { getV1DatabasesByIdInfraLogs, getV1DatabasesByIdInstanceLogs } from '@replix/client';
import { useCallback } from 'react';
import { api, unwrap } from '../../api.ts';
import { useInstanceStatus } from '../../components/instance-queries.ts';
import { LogTail } from '../../components/log-tail.tsx';
import { useDatabase } from './database-layout.tsx';
import './operations.css';

/**
 * Live tails of the latest deployment's steps (infrastructure log) and of the running
 * instance's own log. The API has no level filter; the tails filter by text.
 */
export function LogsTab() {
  const database = useDatabase();
  const id = database.id;
  // The instance id tells the tail when a new instance (a new log file) replaced the old one.
  const status = useInstanceStatus(id);
  const instanceId = status.data ? (status.data.instance?.id ?? null) : undefined;

  const loadInfra = useCallback(
    (token: string | undefined) =>
      unwrap(
        getV1DatabasesByIdInfraLogs({ client: api, path: { id }, query: { nextToken: token } }),
      ),
    [id],
  );
  const loadInstance = useCallback(
    (token: string | undefined) =>
      unwrap(
        getV1DatabasesByIdInstanceLogs({ client: api, path: { id }, query: { nextToken: token } }),
      ),
    [id],
  );

  return (
    <div className="stack">
      <LogTail
        title="Instance log"
        subtitle="What the running instance writes: requests, syncs, snapshot reloads."
        load={loadInstance}
        resetKey={id}
        restartKey={instanceId}
        empty={
          instanceId === null
            ? 'No instance runs now, so there is no instance log. It starts when the database runs.'
            : 'The instance has written nothing yet.'
        }
      />
      <LogTail
        title="Infrastructure log"
        subtitle="The steps of the latest deployment: stopping the old instance, starting the new one, loading the snapshot."
        load={loadInfra}
        resetKey={id}
        empty="No deployment yet. Provision, resume or redeploy starts one, and its steps show here."
      />
    </div>
  );
}
