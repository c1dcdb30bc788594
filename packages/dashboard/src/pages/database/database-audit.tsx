import { AuditLog } from '../../components/audit-log.tsx';
import { useDatabase } from './database-layout.tsx';

/** What happened to this database: its actions, builds, deploys, keys and webhooks. */
export function DatabaseAuditTab() {
  const database = useDatabase();
  return <AuditLog scope={{ kind: 'database', databaseId: database.id }} />;
}
