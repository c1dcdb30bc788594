import { AuditLog } from '../components/audit-log.tsx';
import { Page } from '../components/page.tsx';

/** Everything that happened across the account: its databases, connections, team, billing. */
export function AuditPage() {
  return (
    <Page title="Audit log">
      <p className="muted">
        Every change to the account’s resources, newest first. Nothing is ever removed from it.
      </p>
      <AuditLog scope={{ kind: 'account' }} />
    </Page>
  );
}
