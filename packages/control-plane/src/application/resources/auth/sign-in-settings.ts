import { Type } from 'typebox';
import type { OidcSettings } from '../../../config.ts';

const NullableString = (description: string) =>
  Type.Union([Type.String(), Type.Null()], { description });

/** What a dashboard or CLI needs to start a sign-in; public, like the issuer's own discovery. */
export const SignInSettings = Type.Object(
  {
    oidc: Type.Union(
      [
        Type.Object({
          issuer: Type.String({
            description: 'The OpenID Connect issuer; its discovery document is under it.',
          }),
          scopes: Type.String({ description: 'The scopes to ask for, space-separated.' }),
          dashboardClientId: NullableString(
            "The dashboard's public client (authorization code with PKCE); null: no redirect sign-in.",
          ),
          cliClientId: NullableString(
            "The CLI's public client (device authorization grant); null: `replix login --token` only.",
          ),
        }),
        Type.Null(),
      ],
      {
        description:
          'The external identity provider, or null for the built-in issuer (login links, `replix login --email`).',
      },
    ),
  },
  { $id: 'SignInSettings' },
);

export interface SignInSettingsBody {
  readonly oidc: {
    readonly issuer: string;
    readonly scopes: string;
    readonly dashboardClientId: string | null;
    readonly cliClientId: string | null;
  } | null;
}

export function signInSettingsOf(oidc: OidcSettings | undefined): SignInSettingsBody {
  if (!oidc) return { oidc: null };
  return {
    oidc: {
      issuer: oidc.issuer,
      scopes: oidc.scopes,
      dashboardClientId: oidc.dashboardClientId ?? null,
      cliClientId: oidc.cliClientId ?? null,
    },
  };
}
