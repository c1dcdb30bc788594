import { useCallback, useSyncExternalStore } from 'react';

/**
 * The API key the playground uses for each database. The control plane never returns a key
 * after creating it, so the user pastes one or has one made; it is kept in sessionStorage only
 * (this tab, until it closes), never in localStorage or the URL.
 */
const PREFIX = 'replix.playground.key.';
const listeners = new Set<() => void>();

function read(databaseId: string): string | null {
  try {
    return sessionStorage.getItem(PREFIX + databaseId);
  } catch {
    return null;
  }
}

export function storePlaygroundKey(databaseId: string, key: string | null): void {
  try {
    if (key) sessionStorage.setItem(PREFIX + databaseId, key);
    else sessionStorage.removeItem(PREFIX + databaseId);
  } catch {
    // Storage refused (private mode): the key simply is not remembered.
  }
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The stored key of a database (null when none), and a setter. */
export function usePlaygroundKey(databaseId: string) {
  const key = useSyncExternalStore(subscribe, () => read(databaseId));
  const setKey = useCallback(
    (value: string | null) => storePlaygroundKey(databaseId, value),
    [databaseId],
  );
  return [key, setKey] as const;
}

/**
 * Keys made or pasted here in the last few seconds: the control plane pushes a new key to the
 * instance within a few seconds (5 at most), so until then the instance may still refuse it.
 */
const fresh = new Map<string, number>();
const FRESH_MS = 10_000;

export function markKeyFresh(key: string): void {
  fresh.set(key, Date.now());
}

export function isKeyFresh(key: string): boolean {
  return Date.now() - (fresh.get(key) ?? 0) < FRESH_MS;
}

/** `rxk_<keyId>.<hmac>`: a key's shape, to catch a paste of something else. */
export const API_KEY_PATTERN = /^rxk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/;

/** The key id part, to name a key without showing it. */
export function keyPrefix(key: string): string {
  return key.split('.')[0] ?? key;
}
