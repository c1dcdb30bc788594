import { SOURCE_DIALECTS } from '@replix/sources/dialect';
import { Link } from 'react-router';
import { Time } from '../../components/bits.tsx';
import { WriteLink } from '../../components/connection-links.tsx';
import {
  type Connection,
  useConnections,
  useDatabases,
} from '../../components/connection-queries.ts';
import { DataTable } from '../../components/data-table.tsx';
import { Empty, Page, QueryList } from '../../components/page.tsx';
import '../connections-databases.css';

function ConnectionRow(props: { connection: Connection; databases: number | undefined }) {
  const { connection } = props;
  return (
    <tr>
      <th scope="row">
        <Link to={`/connections/${connection.id}`}>{connection.name}</Link>
      </th>
      <td>{SOURCE_DIALECTS[connection.backend].label}</td>
      <td>
        <code>
          {connection.host}:{connection.port}
        </code>
      </td>
      <td>
        <code>{connection.user}</code>
      </td>
      <td>{connection.ssh ? `yes, via ${connection.ssh.host}` : 'no'}</td>
      <td>{connection.tlsMode}</td>
      <td>{connection.defaultRegion}</td>
      <td className="number">{props.databases ?? '–'}</td>
      <td>
        <Time value={connection.createdAt} />
      </td>
    </tr>
  );
}

/** The account's connections: the source servers its databases read from. */
export function ConnectionsPage() {
  const connections = useConnections();
  const databases = useDatabases();
  const usage = new Map<string, number>();
  for (const database of databases.data ?? []) {
    usage.set(database.connectionId, (usage.get(database.connectionId) ?? 0) + 1);
  }
  return (
    <Page
      title="Connections"
      actions={
        <WriteLink to="/connections/new" primary>
          New connection
        </WriteLink>
      }
    >
      <QueryList
        query={connections}
        what="connections"
        empty={
          <Empty title="No connections yet">
            <p>
              A connection is a source server (MySQL or MariaDB, PostgreSQL, SQL Server) and the
              credentials Replix reads it with, directly or through an SSH tunnel. Every database
              serves one schema of a connection, so add a connection first.
            </p>
            <WriteLink to="/connections/new" primary>
              New connection
            </WriteLink>
          </Empty>
        }
      >
        {(list) => (
          <DataTable
            caption="Connections"
            columns={[
              'Name',
              'Engine',
              'Host',
              'User',
              'SSH tunnel',
              'TLS mode',
              'Default region',
              { label: 'Databases', number: true },
              'Created',
            ]}
          >
            {list.map((connection) => (
              <ConnectionRow
                key={connection.id}
                connection={connection}
                databases={databases.data ? (usage.get(connection.id) ?? 0) : undefined}
              />
            ))}
          </DataTable>
        )}
      </QueryList>
    </Page>
  );
}
