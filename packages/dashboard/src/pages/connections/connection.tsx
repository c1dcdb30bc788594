import { deleteV1ConnectionsById } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { hasRole, useAccount } from '../../account.ts';
import { api, isApiError, unwrap } from '../../api.ts';
import { StatusBadge, Time } from '../../components/bits.tsx';
import { ConnectionEditForm } from '../../components/connection-edit.tsx';
import { WriteLink } from '../../components/connection-links.tsx';
import {
  BACKEND_LABELS,
  type Connection,
  type DatabaseRecord,
  keys,
  MEMBER_REASON,
  useConnection,
  useDatabases,
} from '../../components/connection-queries.ts';
import { ConnectionRetest } from '../../components/connection-retest.tsx';
import { Empty, ErrorNotice, Loading, Page, Panel, QueryState } from '../../components/page.tsx';
import '../connections-databases.css';

function ConnectionDetails(props: { connection: Connection }) {
  const { connection } = props;
  const ssh = connection.ssh;
  return (
    <Panel title="Details">
      <dl className="stats conn-details">
        <div>
          <dt>Engine</dt>
          <dd>{BACKEND_LABELS[connection.backend]}</dd>
        </div>
        <div>
          <dt>Host</dt>
          <dd>
            <code>{connection.host}</code>
          </dd>
        </div>
        <div>
          <dt>Port</dt>
          <dd>{connection.port}</dd>
        </div>
        <div>
          <dt>User</dt>
          <dd>
            <code>{connection.user}</code>
          </dd>
        </div>
        <div>
          <dt>Password</dt>
          <dd>{connection.hasPassword ? 'stored, never shown' : 'none'}</dd>
        </div>
        <div>
          <dt>TLS mode</dt>
          <dd>{connection.tlsMode}</dd>
        </div>
        <div>
          <dt>Default region</dt>
          <dd>{connection.defaultRegion}</dd>
        </div>
        <div>
          <dt>SSH tunnel</dt>
          <dd>
            {ssh ? (
              <>
                <code>
                  {ssh.user}@{ssh.host}:{ssh.port}
                </code>
                <span className="conn-sub">
                  {ssh.hasPrivateKey ? 'key stored, never shown' : 'no key'}
                </span>
              </>
            ) : (
              'none'
            )}
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time value={connection.createdAt} />
          </dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <Time value={connection.updatedAt} />
          </dd>
        </div>
      </dl>
    </Panel>
  );
}

function ConnectionDatabases(props: {
  connection: Connection;
  databases: DatabaseRecord[] | undefined;
}) {
  const users = props.databases?.filter((db) => db.connectionId === props.connection.id);
  return (
    <Panel
      title="Databases using this connection"
      actions={
        <WriteLink to={`/databases/new?connection=${props.connection.id}`}>
          New database on this connection
        </WriteLink>
      }
    >
      {users === undefined ? (
        <Loading what="databases" />
      ) : users.length === 0 ? (
        <Empty title="No database uses this connection yet">
          A database serves one schema of this connection through the Replix API.
        </Empty>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Source schema</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {users.map((database) => (
                <tr key={database.id}>
                  <th scope="row">
                    <Link to={`/databases/${database.id}`}>{database.name}</Link>
                  </th>
                  <td>
                    <StatusBadge status={database.status} />
                  </td>
                  <td>
                    <code>{database.sourceSchema}</code>
                  </td>
                  <td>
                    <Time value={database.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Panel>
  );
}

/** Deleting asks once more; a connection still in use is refused by the API (409). */
function DeleteConnection(props: { connection: Connection; inUse: number; onCancel: () => void }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () =>
      unwrap(deleteV1ConnectionsById({ client: api, path: { id: props.connection.id } })),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: keys.connection(props.connection.id) });
      void queryClient.invalidateQueries({ queryKey: keys.connections });
      navigate('/connections');
    },
  });
  return (
    <div className="notice notice-warn conn-confirm">
      <p>
        <strong>Delete the connection “{props.connection.name}”?</strong> Its stored credentials are
        removed.
        {props.inUse > 0 &&
          ` It is used by ${props.inUse} database(s): the API refuses to delete it until they are deleted.`}
      </p>
      {remove.error && (
        <ErrorNotice
          error={remove.error}
          title={isApiError(remove.error, 'conflict') ? 'Still in use' : 'Could not delete'}
        />
      )}
      <div className="row">
        <button
          type="button"
          className="button button-danger"
          onClick={() => remove.mutate()}
          disabled={remove.isPending}
        >
          {remove.isPending ? 'Deleting…' : 'Confirm delete'}
        </button>
        <button type="button" className="button" onClick={props.onCancel}>
          Keep it
        </button>
      </div>
    </div>
  );
}

/** One connection: its settings (never a secret), a new test, edit, delete, its databases. */
export function ConnectionPage() {
  const { connectionId } = useParams() as { connectionId: string };
  const connection = useConnection(connectionId);
  const databases = useDatabases();
  const { data: account } = useAccount();
  const canWrite = hasRole(account, 'admin');
  const [mode, setMode] = useState<'view' | 'edit' | 'delete'>('view');

  if (!connection.data) {
    return (
      <Page title="Connection">
        <QueryState query={connection} what="the connection" />
        <Link to="/connections">Back to connections</Link>
      </Page>
    );
  }
  const inUse = databases.data?.filter((db) => db.connectionId === connectionId).length ?? 0;
  return (
    <Page
      title={connection.data.name}
      actions={
        <>
          <button
            type="button"
            className="button"
            onClick={() => setMode('edit')}
            disabled={!canWrite || mode === 'edit'}
            title={canWrite ? undefined : MEMBER_REASON}
          >
            Edit
          </button>
          <button
            type="button"
            className="button button-danger"
            onClick={() => setMode('delete')}
            disabled={!canWrite}
            title={canWrite ? undefined : MEMBER_REASON}
          >
            Delete connection
          </button>
        </>
      }
    >
      <p className="conn-lead">
        <Link to="/connections">Connections</Link> / {connection.data.name}
      </p>
      {mode === 'delete' && (
        <DeleteConnection
          connection={connection.data}
          inUse={inUse}
          onCancel={() => setMode('view')}
        />
      )}
      {mode === 'edit' ? (
        <ConnectionEditForm
          connection={connection.data}
          account={account}
          onDone={() => setMode('view')}
        />
      ) : (
        <div className="grid-2">
          <ConnectionDetails connection={connection.data} />
          <ConnectionRetest
            connection={connection.data}
            canWrite={canWrite}
            reason={MEMBER_REASON}
          />
        </div>
      )}
      <ConnectionDatabases connection={connection.data} databases={databases.data} />
    </Page>
  );
}
