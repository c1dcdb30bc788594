import { useEffect, useState, useSyncExternalStore } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { CenteredCard } from '../auth-gate.tsx';
import { ErrorNotice, Loading } from '../components/page.tsx';
import {
  finishIssuerSignIn,
  IssuerRefusal,
  type IssuerSettings,
  startIssuerSignIn,
} from '../issuer-sign-in.ts';
import {
  endLocalSession,
  hadIssuerSession,
  sessionToken,
  signInWithIssuer,
  subscribeToSession,
} from '../session.ts';
import { useIssuerSettings } from '../sign-in-settings.ts';
import { SignInPage } from './sign-in.tsx';

/** What the issuer answers a silent sign-in when the user must act there. */
const NEEDS_THE_USER = new Set(['login_required', 'interaction_required', 'consent_required']);

function nextOf(params: URLSearchParams): string {
  const next = params.get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/databases';
}

/** `/sign-in`: the issuer's redirect flow when this control plane has one, else login links. */
export function SignInRoute() {
  const settings = useIssuerSettings();
  if (settings.isPending) {
    return (
      <CenteredCard title="Sign in to Replix">
        <Loading what="the sign-in settings" />
      </CenteredCard>
    );
  }
  if (settings.error) {
    return (
      <CenteredCard title="Sign in to Replix">
        <ErrorNotice error={settings.error} />
      </CenteredCard>
    );
  }
  return settings.data ? <IssuerSignIn settings={settings.data} /> : <SignInPage />;
}

// A silent attempt leaves the page; React's development double effects must not start two.
let silentStarted = false;

function IssuerSignIn(props: { settings: IssuerSettings }) {
  const [params] = useSearchParams();
  const next = nextOf(params);
  const token = useSyncExternalStore(subscribeToSession, sessionToken);
  const [failure, setFailure] = useState<unknown>();
  const silent = hadIssuerSession();
  useEffect(() => {
    if (token || !silent || silentStarted) return;
    silentStarted = true;
    startIssuerSignIn(props.settings, { next, silent: true }).catch(setFailure);
  }, [token, silent, next, props.settings]);

  if (token) return <Navigate to={next} replace />;
  if (silent && !failure) {
    return (
      <CenteredCard title="Sign in to Replix">
        <Loading what="your session" />
      </CenteredCard>
    );
  }
  const start = () => {
    setFailure(undefined);
    startIssuerSignIn(props.settings, { next, silent: false }).catch(setFailure);
  };
  return (
    <CenteredCard title="Sign in to Replix">
      <div className="stack">
        {failure !== undefined && <ErrorNotice error={failure} />}
        <p>
          This Replix signs you in with your identity provider at{' '}
          <code>{new URL(props.settings.issuer).host}</code>.
        </p>
        <button type="button" className="button button-primary" onClick={start}>
          Sign in
        </button>
      </div>
    </CenteredCard>
  );
}

// The code in the address works once: each callback address is finished once, and the
// session it gives (or the one it ends) is set once, whatever renders the page again.
const finishing = new Map<string, Promise<string>>();

function finishOnce(settings: IssuerSettings, address: string): Promise<string> {
  let pending = finishing.get(address);
  if (!pending) {
    pending = finishIssuerSignIn(settings, new URL(address)).then(
      (session) => {
        signInWithIssuer(session);
        return session.next;
      },
      (error: unknown) => {
        endLocalSession();
        throw error;
      },
    );
    finishing.set(address, pending);
  }
  return pending;
}

/** `/oidc/callback`: where the issuer sends the browser back with the code (or an error). */
export function IssuerCallbackPage() {
  const settings = useIssuerSettings();
  const navigate = useNavigate();
  const [failure, setFailure] = useState<unknown>();
  useEffect(() => {
    if (!settings.data) return;
    finishOnce(settings.data, window.location.href).then(
      (next) => navigate(next, { replace: true }),
      (error: unknown) => {
        if (error instanceof IssuerRefusal && error.silent && NEEDS_THE_USER.has(error.error)) {
          navigate(`/sign-in?next=${encodeURIComponent(error.next)}`, { replace: true });
        } else {
          setFailure(error);
        }
      },
    );
  }, [settings.data, navigate]);

  if (settings.data === null) return <Navigate to="/sign-in" replace />;
  const error = failure ?? settings.error;
  return (
    <CenteredCard title="Sign in to Replix">
      {error ? (
        <div className="stack">
          <ErrorNotice error={error} title="The sign-in did not finish" />
          <Link className="button button-primary" to="/sign-in">
            Try again
          </Link>
        </div>
      ) : (
        <Loading what="your session" />
      )}
    </CenteredCard>
  );
}
