import { Link } from 'react-router';
import { CenteredCard } from '../auth-gate.tsx';

/**
 * The terms of service, readable without an account: the first sign-in links here before it
 * asks for acceptance. The version accepted is the control plane's `REPLIX_TOS_VERSION`; a new
 * version asks every user again at their next sign-in.
 */
export function TermsPage() {
  return (
    <CenteredCard title="Replix terms of service">
      <div className="stack terms">
        <p className="muted">
          What you agree to when you accept the terms at your first sign-in. The version you
          accepted, and when, are on your <Link to="/settings">Settings</Link> page.
        </p>
        <h2>1. The service</h2>
        <p>
          Replix keeps a read-only, in-memory snapshot of the tables you choose from a source
          database you connect, and answers queries over it at each database's own address. It never
          writes to your source.
        </p>
        <h2>2. Your data and credentials</h2>
        <p>
          You may only connect sources you are allowed to read. Source passwords, SSH keys and
          signing secrets are stored encrypted and are never shown again after you save them.
          Snapshots hold the rows your schema config selects, and are deleted when you terminate or
          delete the database.
        </p>
        <h2>3. Keys and access</h2>
        <p>
          Anyone holding one of a database's API keys can query it. Keep keys secret, give
          applications query keys rather than admin keys, and delete a key you no longer trust.
          Every change made through the dashboard, the CLI or a management key is recorded in the
          audit log.
        </p>
        <h2>4. Plans and limits</h2>
        <p>
          Each plan sets limits (databases, compute units, instance size, sync interval); the
          service refuses what goes over them rather than charging for it, unless you turned on
          overage with a spending cap.
        </p>
        <h2>5. Availability</h2>
        <p>
          The service is provided as is. Instances are restarted when they stop, and redeploys keep
          each database's address, but no uptime is promised.
        </p>
        <h2>6. Changes to these terms</h2>
        <p>
          A new version of the terms is asked for at your next sign-in; until you accept it you can
          sign out, and your databases keep running.
        </p>
      </div>
    </CenteredCard>
  );
}
