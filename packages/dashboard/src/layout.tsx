import { NavLink, Outlet } from 'react-router';
import { useAccount } from './account.ts';
import { signOut } from './session.ts';

const LINKS = [
  { to: '/databases', label: 'Databases' },
  { to: '/connections', label: 'Connections' },
  { to: '/query', label: 'Query playground' },
  { to: '/audit', label: 'Audit log' },
  { to: '/team', label: 'Team' },
  { to: '/billing', label: 'Billing' },
  { to: '/settings', label: 'Settings' },
];

/** The frame around every signed-in page: navigation, who is signed in, the page itself. */
export function Layout() {
  const { data: account } = useAccount();
  const links = account?.user.admin ? [...LINKS, { to: '/admin', label: 'Admin' }] : LINKS;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <NavLink to="/databases" className="brand">
          Replix
        </NavLink>
        <div className="whoami">
          <span>
            {account?.user.email} <span className="muted">({account?.user.role})</span>
          </span>
          <button type="button" className="button button-small" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <nav className="sidebar" aria-label="Main">
        <ul>
          {links.map((link) => (
            <li key={link.to}>
              <NavLink to={link.to}>{link.label}</NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <main className="content" id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
