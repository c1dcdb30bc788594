import { Link } from 'react-router';
import { StatusBadge, Time } from '../../components/bits.tsx';
import { WriteLink } from '../../components/connection-links.tsx';
import {
  type Connection,
  type DatabaseRecord,
  useConnections,
  useDatabases,
} from '../../components/connection-queries.ts';
import { DataTable } from '../../components/data-table.tsx';
import { Empty, Page, QueryList } from '../../components/page.tsx';
import '../connections-databases.css';

function DatabaseRow(props: { database: DatabaseRecord; connection: Connection | undefined }) {
  const { database, connection } = props;
  return (
    <tr>
      <th scope="row">
        <Link to={`/databases/${database.id}`}>{database.name}</Link>
      </th>
      <td>
        <StatusBadge status={database.status} />
        {database.lastError && (
          <span className="db-error" title={database.lastError}>
            {database.lastError}
          </span>
        )}
      </td>
      <td>
        {connection ? (
          <Link to={`/connections/${connection.id}`}>{connection.name}</Link>
        ) : (
          <span className="muted">–</span>
        )}
      </td>
      <td>
        <code>{database.sourceSchema}</code>
      </td>
      <td>{database.instanceSize}</td>
      <td>{database.region}</td>
      <td>
        <Time value={database.updatedAt} />
      </td>
    </tr>
  );
}

/** What the list shows with no databases: a connection comes first, then a database. */
function NoDatabases(props: { hasConnections: boolean }) {
  if (!props.hasConnections) {
    return (
      <Empty title="No databases yet">
        <p>
          A database serves one schema of a source server (MySQL or MariaDB, PostgreSQL, SQL Server)
          through the Replix query API. Start by adding a connection: the server’s address and the
          credentials Replix reads it with.
        </p>
        <WriteLink to="/connections/new" primary>
          New connection
        </WriteLink>
      </Empty>
    );
  }
  return (
    <Empty title="No databases yet">
      <p>
        Pick a connection and one of its schemas, say which tables to serve, and provision it:
        Replix builds and runs an instance that answers queries over HTTP.
      </p>
      <WriteLink to="/databases/new" primary>
        New database
      </WriteLink>
    </Empty>
  );
}

/** The account's databases with their status, kept current by polling every 5 seconds. */
export function DatabasesPage() {
  const databases = useDatabases({ poll: true });
  const connections = useConnections();
  const byId = new Map((connections.data ?? []).map((c) => [c.id, c]));
  return (
    <Page
      title="Databases"
      actions={
        <WriteLink to="/databases/new" primary>
          New database
        </WriteLink>
      }
    >
      <QueryList
        query={databases}
        what="databases"
        empty={connections.data && <NoDatabases hasConnections={connections.data.length > 0} />}
      >
        {(list) => (
          <DataTable
            caption="Databases"
            columns={['Name', 'Status', 'Connection', 'Source schema', 'Size', 'Region', 'Updated']}
          >
            {list.map((database) => (
              <DatabaseRow
                key={database.id}
                database={database}
                connection={byId.get(database.connectionId)}
              />
            ))}
          </DataTable>
        )}
      </QueryList>
    </Page>
  );
}
