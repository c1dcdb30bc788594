import { postV1AuthLoginLinksRedeem } from '@replix/client';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { api, unwrap } from '../api.ts';
import { CenteredCard } from '../auth-gate.tsx';
import { TextArea } from '../components/fields.tsx';
import { ErrorNotice, Loading } from '../components/page.tsx';
import { expiryOf, signIn } from '../session.ts';

const LOGIN_LINK_AUDIENCE = 'replix-login-link';

/** The link code in a pasted login link (`…/sign-in#link=…`), or undefined. */
function linkCodeOf(text: string): string | undefined {
  const match = /[#&]link=([^&\s]+)/.exec(text);
  if (match) return decodeURIComponent(match[1]!);
  try {
    const payload = JSON.parse(atob(text.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    const audience = [payload.aud].flat();
    return audience.includes(LOGIN_LINK_AUDIENCE) ? text : undefined;
  } catch {
    return undefined;
  }
}

// Each link works once; React's development double effects must not spend it twice.
const redemptions = new Map<string, Promise<{ token: string; expiresAt: string }>>();
function redeem(code: string) {
  let pending = redemptions.get(code);
  if (!pending) {
    pending = unwrap(postV1AuthLoginLinksRedeem({ client: api, body: { code } }));
    redemptions.set(code, pending);
  }
  return pending;
}

/**
 * Sign-in for the built-in identity: a one-time login link (printed by `npm start` or
 * `npx replix login-link`) signs in by itself; a pasted link or bearer token works too.
 */
export function SignInPage() {
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const next = params.get('next')?.startsWith('/') ? params.get('next')! : '/databases';
  const [pasted, setPasted] = useState('');
  const signInWith = useMutation({
    mutationFn: async (text: string) => {
      const trimmed = text.trim();
      const code = linkCodeOf(trimmed);
      if (code) return redeem(code);
      return { token: trimmed, expiresAt: expiryOf(trimmed) };
    },
    onSuccess: (session) => {
      signIn(session.token, session.expiresAt);
      navigate(next, { replace: true });
    },
  });

  const linkInAddress = window.location.hash.includes('link=') ? window.location.hash : '';
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once for the link in the address
  useEffect(() => {
    if (!linkInAddress) return;
    // The code must not stay in the address bar or the history.
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    signInWith.mutate(linkInAddress);
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (pasted.trim()) signInWith.mutate(pasted);
  };

  return (
    <CenteredCard title="Sign in to Replix">
      {signInWith.isPending ? (
        <Loading what="your session" />
      ) : (
        <form className="stack" onSubmit={submit}>
          {signInWith.error && <ErrorNotice error={signInWith.error} />}
          <p>
            Open the one-time login link that <code>npm start</code> printed, or make one on the
            machine running Replix:
          </p>
          <pre className="code-block">npx replix login-link --email you@example.com</pre>
          <TextArea
            label="Login link or bearer token"
            hint="A login link works once, for 15 minutes. A token from your identity provider or a management key (rmk_…) works too."
            rows={3}
            value={pasted}
            onChange={(event) => setPasted(event.target.value)}
          />
          <button type="submit" className="button button-primary" disabled={!pasted.trim()}>
            Sign in
          </button>
        </form>
      )}
    </CenteredCard>
  );
}
