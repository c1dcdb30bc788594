import { getV1AuthConfig } from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from './api.ts';
import type { IssuerSettings } from './issuer-sign-in.ts';

/**
 * Where this control plane signs users in (`GET /v1/auth/config`, no token needed): the
 * issuer and the dashboard's client there, or null for the built-in issuer's login links.
 */
export function useIssuerSettings() {
  return useQuery({
    queryKey: ['auth-config'],
    queryFn: async (): Promise<IssuerSettings | null> => {
      const { oidc } = await unwrap(getV1AuthConfig({ client: api }));
      if (!oidc?.dashboardClientId) return null;
      return { issuer: oidc.issuer, clientId: oidc.dashboardClientId, scopes: oidc.scopes };
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
}
