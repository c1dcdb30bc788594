import { Navigate, Route, Routes } from 'react-router';
import { AuthGate } from './auth-gate.tsx';
import { Layout } from './layout.tsx';
import { AdminPage } from './pages/admin.tsx';
import { AuditPage } from './pages/audit.tsx';
import { BillingPage } from './pages/billing.tsx';
import { ConnectionPage } from './pages/connections/connection.tsx';
import { ConnectionsPage } from './pages/connections/connections.tsx';
import { NewConnectionPage } from './pages/connections/new-connection.tsx';
import { BuildsTab } from './pages/database/builds.tsx';
import { ConfigTab } from './pages/database/config.tsx';
import { DatabaseAuditTab } from './pages/database/database-audit.tsx';
import { DatabaseLayout } from './pages/database/database-layout.tsx';
import { KeysTab } from './pages/database/keys.tsx';
import { LogsTab } from './pages/database/logs.tsx';
import { MetricsTab } from './pages/database/metrics.tsx';
import { OverviewTab } from './pages/database/overview.tsx';
import { WebhooksTab } from './pages/database/webhooks.tsx';
import { DatabasesPage } from './pages/databases/databases.tsx';
import { NewDatabasePage } from './pages/databases/new-database.tsx';
import { IssuerCallbackPage, SignInRoute } from './pages/issuer-sign-in.tsx';
import { NotFoundPage } from './pages/not-found.tsx';
import { QueryPage } from './pages/query.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { TeamPage } from './pages/team.tsx';
import { TermsPage } from './pages/terms.tsx';

/** Every page address. Everything but sign-in (and its callback) and the terms needs a session (AuthGate). */
export function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignInRoute />} />
      <Route path="/oidc/callback" element={<IssuerCallbackPage />} />
      <Route path="/terms" element={<TermsPage />} />
      <Route element={<AuthGate />}>
        <Route element={<Layout />}>
          <Route index element={<Navigate to="/databases" replace />} />
          <Route path="databases" element={<DatabasesPage />} />
          <Route path="databases/new" element={<NewDatabasePage />} />
          <Route path="databases/:databaseId" element={<DatabaseLayout />}>
            <Route index element={<OverviewTab />} />
            <Route path="config" element={<ConfigTab />} />
            <Route path="builds" element={<BuildsTab />} />
            <Route path="logs" element={<LogsTab />} />
            <Route path="metrics" element={<MetricsTab />} />
            <Route path="keys" element={<KeysTab />} />
            <Route path="webhooks" element={<WebhooksTab />} />
            <Route path="audit" element={<DatabaseAuditTab />} />
          </Route>
          <Route path="connections" element={<ConnectionsPage />} />
          <Route path="connections/new" element={<NewConnectionPage />} />
          <Route path="connections/:connectionId" element={<ConnectionPage />} />
          <Route path="query" element={<QueryPage />} />
          <Route path="audit" element={<AuditPage />} />
          <Route path="team" element={<TeamPage />} />
          <Route path="settings" element={<SettingsPage />} />
          <Route path="billing" element={<BillingPage />} />
          <Route path="admin" element={<AdminPage />} />
          <Route path="*" element={<NotFoundPage />} />
        </Route>
      </Route>
    </Routes>
  );
}
