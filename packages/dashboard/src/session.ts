/**
 * The signed-in user's bearer token, never in localStorage (which any script of the origin
 * reads, in every tab, until removed).
 *
 * - A token from the OpenID Connect issuer lives in memory only. This tab remembers in
 *   sessionStorage that it was signed in (a flag, no token), so a reload signs in again at the
 *   issuer without a prompt while the issuer's own session lasts (issuer-sign-in.ts).
 * - A built-in token (login link, pasted token) has no issuer session to come back from: it is
 *   kept in sessionStorage, so it survives a reload of this tab and is gone when the tab closes.
 */
const BUILT_IN_KEY = 'replix.session';
const ISSUER_FLAG_KEY = 'replix.issuer-session';

interface Session {
  readonly token: string;
  readonly expiresAt: string;
  /** Where "Sign out" goes after clearing this tab: the issuer's logout, if it has one. */
  readonly signOutUrl?: string;
}

let inMemory: Session | undefined;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

function storedBuiltIn(): Session | undefined {
  try {
    return JSON.parse(sessionStorage.getItem(BUILT_IN_KEY) ?? 'null') ?? undefined;
  } catch {
    return undefined;
  }
}

function current(): Session | undefined {
  const session = inMemory ?? storedBuiltIn();
  if (!session || Date.parse(session.expiresAt) <= Date.now()) return undefined;
  return session;
}

export function sessionToken(): string | undefined {
  return current()?.token;
}

/** Signs in with a built-in token (a redeemed login link, a pasted token, a 2FA exchange). */
export function signIn(token: string, expiresAt: string): void {
  inMemory = undefined;
  sessionStorage.setItem(BUILT_IN_KEY, JSON.stringify({ token, expiresAt }));
  notify();
}

/** Signs in with the issuer's access token, held in memory only. */
export function signInWithIssuer(session: Session): void {
  sessionStorage.removeItem(BUILT_IN_KEY);
  sessionStorage.setItem(ISSUER_FLAG_KEY, '1');
  inMemory = session;
  notify();
}

/** Whether this tab was signed in at the issuer before a reload: worth a silent sign-in. */
export function hadIssuerSession(): boolean {
  return sessionStorage.getItem(ISSUER_FLAG_KEY) === '1';
}

/**
 * Forgets the session in this tab only: the token the API refused (expired or revoked). The
 * issuer's session is left alone; signing in again there needs no password while it lasts.
 */
export function endLocalSession(): void {
  const had = inMemory !== undefined || storedBuiltIn() !== undefined || hadIssuerSession();
  inMemory = undefined;
  sessionStorage.removeItem(BUILT_IN_KEY);
  sessionStorage.removeItem(ISSUER_FLAG_KEY);
  // Nothing ended, nothing to tell: a listener clears every cached query, the sign-in page's too.
  if (had) notify();
}

/**
 * The API refused the token: forgets it. An expired issuer token keeps this tab's flag, so the
 * sign-in page renews it without a prompt; a refused live one drops it (asking the issuer again
 * would only loop). Without a session here (a reload before the renewal) there is nothing to end.
 */
export function sessionRefused(): void {
  const session = inMemory ?? storedBuiltIn();
  if (!session) return;
  const expired = Date.parse(session.expiresAt) <= Date.now();
  inMemory = undefined;
  sessionStorage.removeItem(BUILT_IN_KEY);
  if (!expired) sessionStorage.removeItem(ISSUER_FLAG_KEY);
  notify();
}

/** "Sign out": forgets the session here, then signs out at the issuer when it has a logout. */
export function signOut(): void {
  const signOutUrl = inMemory?.signOutUrl;
  endLocalSession();
  if (signOutUrl) window.location.assign(signOutUrl);
}

/** For useSyncExternalStore: re-render when the session changes. */
export function subscribeToSession(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** The expiry of a JWT (its `exp` claim), or 12 hours from now for a token without one. */
export function expiryOf(token: string): string {
  try {
    const payload = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    if (typeof payload.exp === 'number') return new Date(payload.exp * 1000).toISOString();
  } catch {
    // A management key or an opaque token: no expiry we can read.
  }
  return new Date(Date.now() + 12 * 3600 * 1000).toISOString();
}
