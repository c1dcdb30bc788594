/**
 * The signed-in user's bearer token, kept in localStorage so a reload or a new tab stays
 * signed in until the token expires (12 hours for the built-in identity).
 */
const STORAGE_KEY = 'replix.session';

interface StoredSession {
  readonly token: string;
  readonly expiresAt: string;
}

const listeners = new Set<() => void>();

function read(): StoredSession | undefined {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as StoredSession | null;
    if (!stored || Date.parse(stored.expiresAt) <= Date.now()) return undefined;
    return stored;
  } catch {
    return undefined;
  }
}

export function sessionToken(): string | undefined {
  return read()?.token;
}

export function signIn(token: string, expiresAt: string): void {
  localStorage.setItem(STORAGE_KEY, JSON.stringify({ token, expiresAt }));
  for (const listener of listeners) listener();
}

export function signOut(): void {
  localStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

/** For useSyncExternalStore: re-render when the session changes (here or in another tab). */
export function subscribeToSession(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
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
