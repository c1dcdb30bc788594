import {
  SignInSettings,
  signInSettingsOf,
} from '../../application/resources/auth/sign-in-settings.ts';
import { errorResponses } from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

/** `GET /v1/auth/config`: where the dashboard and the CLI sign in, before they have a token. */
export function registerSignInSettingsRoutes(app: ApiServer, context: ApiContext): void {
  const settings = signInSettingsOf(context.config.oidc);
  app.get(
    '/auth/config',
    {
      config: { public: true },
      schema: {
        tags: ['auth'],
        security: [],
        summary:
          'Where to sign in: the OpenID Connect issuer and client ids, or the built-in issuer',
        description:
          'No bearer token needed. The dashboard runs the authorization-code flow with PKCE and the CLI the device authorization grant against `oidc.issuer` with these client ids.',
        response: { 200: SignInSettings, ...errorResponses() },
      },
    },
    async () => settings,
  );
}
