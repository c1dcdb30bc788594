import { createReplixClient, ReplixApiError, unwrap } from '@replix/client';
import { QueryCache, QueryClient } from '@tanstack/react-query';
import { sessionRefused, sessionToken, subscribeToSession } from './session.ts';

/** The control-plane client every page uses: same origin, the session's token on each call. */
export const api = createReplixClient({ baseUrl: window.location.origin, token: sessionToken });

export { ReplixApiError, unwrap };

/** A message for any error a call can throw, fit to show a user. */
export function errorMessage(error: unknown): string {
  if (error instanceof ReplixApiError) return error.message || error.error;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}

export function isApiError(error: unknown, code: string): boolean {
  return error instanceof ReplixApiError && error.error === code;
}

export const queryClient = new QueryClient({
  queryCache: new QueryCache({
    // An expired or revoked token: back to the sign-in page (the issuer's session, if any, stays).
    onError: (error) => {
      if (isApiError(error, 'unauthorized')) sessionRefused();
    },
  }),
  defaultOptions: {
    queries: {
      // A 4xx will not change by asking again; a network hiccup may.
      retry: (failures, error) =>
        failures < 2 && !(error instanceof ReplixApiError && (error.status ?? 500) < 500),
      refetchOnWindowFocus: false,
    },
  },
});

// A new user (or none) must never see the previous one's cached data.
subscribeToSession(() => queryClient.clear());
