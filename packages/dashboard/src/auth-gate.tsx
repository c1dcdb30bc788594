import { postV1AccountAcceptTos, postV1Auth2FaVerify } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState, useSyncExternalStore } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { type Account, useAccount } from './account.ts';
import { api, isApiError, unwrap } from './api.ts';
import { Checkbox, TextField } from './components/fields.tsx';
import { ErrorNotice, Loading } from './components/page.tsx';
import { secondFactorBody } from './components/second-factor-code.ts';
import { sessionToken, signIn, signOut, subscribeToSession } from './session.ts';

/**
 * Lets a page render only for a signed-in user who has passed their second factor and accepted
 * the current terms; otherwise shows the step that is missing.
 */
export function AuthGate() {
  const token = useSyncExternalStore(subscribeToSession, sessionToken);
  const location = useLocation();
  if (!token) {
    const next = encodeURIComponent(location.pathname + location.search);
    return <Navigate to={`/sign-in?next=${next}`} replace />;
  }
  return <SignedInGate />;
}

/** The steps after the token: asks for the account only once there is a token to ask with. */
function SignedInGate() {
  const account = useAccount();
  if (isApiError(account.error, 'second_factor_required')) return <SecondFactorStep />;
  if (account.error) {
    return (
      <CenteredCard title="Replix">
        <ErrorNotice error={account.error} />
        <button type="button" className="button" onClick={signOut}>
          Sign out
        </button>
      </CenteredCard>
    );
  }
  if (account.isPending) {
    return (
      <CenteredCard title="Replix">
        <Loading what="your account" />
      </CenteredCard>
    );
  }
  if (!account.data.tosAccepted) return <TermsStep account={account.data} />;
  return <Outlet />;
}

export function CenteredCard(props: { title: string; children: React.ReactNode }) {
  return (
    <main className="centered" id="main">
      <div className="card">
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

/** Exchanges the first-factor token for one carrying the second factor (TOTP or recovery code). */
function SecondFactorStep() {
  const [code, setCode] = useState('');
  const verify = useMutation({
    mutationFn: () => unwrap(postV1Auth2FaVerify({ client: api, body: secondFactorBody(code) })),
    onSuccess: (result) => signIn(result.token, result.expiresAt),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    verify.mutate();
  };
  return (
    <CenteredCard title="Two-factor authentication">
      <form onSubmit={submit} className="stack">
        <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
        <TextField
          label="Code"
          value={code}
          onChange={(event) => setCode(event.target.value)}
          autoComplete="one-time-code"
          inputMode="text"
          autoFocus
          required
          error={verify.error ? (verify.error as Error).message : undefined}
        />
        <div className="row">
          <button type="submit" className="button button-primary" disabled={verify.isPending}>
            Verify
          </button>
          <button type="button" className="button" onClick={signOut}>
            Cancel
          </button>
        </div>
      </form>
    </CenteredCard>
  );
}

/** The first sign-in (and each new terms version): accept the terms of service. */
function TermsStep(props: { account: Account }) {
  const [agreed, setAgreed] = useState(false);
  const queryClient = useQueryClient();
  const accept = useMutation({
    mutationFn: () =>
      unwrap(
        postV1AccountAcceptTos({
          client: api,
          body: { version: props.account.currentTosVersion },
        }),
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['account'] }),
  });
  return (
    <CenteredCard title="Welcome to Replix">
      <div className="stack">
        <p>
          Signed in as <strong>{props.account.user.email}</strong>. Before you go on, please read
          and accept the{' '}
          <a href="/terms" target="_blank" rel="noopener">
            terms of service
          </a>{' '}
          (version {props.account.currentTosVersion}).
        </p>
        <Checkbox
          label={`I accept the Replix terms of service, version ${props.account.currentTosVersion}`}
          checked={agreed}
          onChange={setAgreed}
        />
        {accept.error && <ErrorNotice error={accept.error} />}
        <div className="row">
          <button
            type="button"
            className="button button-primary"
            disabled={!agreed || accept.isPending}
            onClick={() => accept.mutate()}
          >
            Accept and continue
          </button>
          <button type="button" className="button" onClick={signOut}>
            Sign out
          </button>
        </div>
      </div>
    </CenteredCard>
  );
}
