import { deleteV1ConnectionsById } from '@replix/client';
import { SOURCE_DIALECTS } from '@replix/sources/dialect';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useAccount } from '../../account.ts';
import { api, isApiError, unwrap } from '../../api.ts';
import { StatusBadge, Time } from '../../components/bits.tsx';
import { ConfirmDeleteButton } from '../../components/confirm.tsx';
import { ConnectionEditForm } from '../../components/connection-edit.tsx';
import { WriteLink } from '../../components/connection-links.tsx';
import {
  type Connection,
  type DatabaseRecord,
  keys,
  useConnection,
  useDatabases,
} from '../../components/connection-queries.ts';
import { ConnectionRetest } from '../../components/connection-retest.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { GuardedButton } from '../../components/guarded-button.tsx';
import { Empty, ErrorNotice, Loading, Page, Panel, QueryState } from '../../components/page.tsx';
import { useWriteBlock } from '../../components/write-access.tsx';
import '../connections-databases.css';

function ConnectionDetails(props: { connection: Connection }) {
  const { connection } = props;
  const ssh = connection.ssh;
  return (
    <Panel title="Details">
      <dl className="stats conn-details">
        <div>
          <dt>Engine</dt>
          <dd>{SOURCE_DIALECTS[connection.backend].label}</dd>
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
          <dt>Last test</dt>
          <dd>
            {connection.lastTest ? (
              <>
                {connection.lastTest.ok
                  ? 'succeeded'
                  : `failed: ${connection.lastTest.error ?? 'no reason given'}`}
                <span className="conn-sub">
                  <Time value={connection.lastTest.testedAt} />
                </span>
              </>
            ) : (
              'never: saved untested'
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
        <DataTable
          caption="Databases using this connection"
          columns={['Name', 'Status', 'Source schema', 'Updated']}
        >
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
        </DataTable>
      )}
    </Panel>
  );
}

/** Deleting the connection; the API refuses (409) while a database still uses it. */
function useDeleteConnection(connectionId: string) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(deleteV1ConnectionsById({ client: api, path: { id: connectionId } })),
    onSuccess: () => {
      queryClient.removeQueries({ queryKey: keys.connection(connectionId) });
      void queryClient.invalidateQueries({ queryKey: keys.connections });
      navigate('/connections');
    },
  });
}

function deleteQuestion(connection: Connection, inUse: number): string {
  const users =
    inUse > 0
      ? ` It is used by ${inUse} database(s): the API refuses to delete it until they are deleted.`
      : '';
  return `Delete the connection “${connection.name}”? Its stored credentials are removed.${users}`;
}

/** One connection: its settings (never a secret), a new test, edit, delete, its databases. */
export function ConnectionPage() {
  const { connectionId } = useParams() as { connectionId: string };
  const connection = useConnection(connectionId);
  const databases = useDatabases();
  const { data: account } = useAccount();
  const blocked = useWriteBlock();
  const [editing, setEditing] = useState(false);
  const remove = useDeleteConnection(connectionId);

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
          <GuardedButton
            className="button"
            disabledReason={blocked}
            disabled={editing}
            onClick={() => setEditing(true)}
          >
            Edit
          </GuardedButton>
          <ConfirmDeleteButton
            label="Delete connection"
            size="normal"
            question={deleteQuestion(connection.data, inUse)}
            pending={remove.isPending}
            disabledReason={blocked}
            onConfirm={() => remove.mutate()}
          />
        </>
      }
    >
      <p className="conn-lead">
        <Link to="/connections">Connections</Link> / {connection.data.name}
      </p>
      {remove.error && (
        <ErrorNotice
          error={remove.error}
          title={isApiError(remove.error, 'conflict') ? 'Still in use' : 'Could not delete'}
        />
      )}
      {editing ? (
        <ConnectionEditForm
          connection={connection.data}
          account={account}
          onDone={() => setEditing(false)}
        />
      ) : (
        <div className="grid-2">
          <ConnectionDetails connection={connection.data} />
          <ConnectionRetest connection={connection.data} blocked={blocked} />
        </div>
      )}
      <ConnectionDatabases connection={connection.data} databases={databases.data} />
    </Page>
  );
}
