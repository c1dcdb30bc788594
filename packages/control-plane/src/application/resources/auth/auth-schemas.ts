import { Type } from 'typebox';
import { DateTime } from '../common-schemas.ts';

export const TwoFactorStatus = Type.Object(
  {
    available: Type.Boolean({
      description:
        'False when tokens come from an external OIDC provider: 2FA is then that provider’s business.',
    }),
    enabled: Type.Boolean(),
    enabledAt: Type.Union([DateTime, Type.Null()]),
    pending: Type.Boolean({ description: 'An enrolment waits for its confirming code.' }),
    recoveryCodesLeft: Type.Integer(),
  },
  { $id: 'TwoFactorStatus' },
);

export const TwoFactorEnrolment = Type.Object(
  {
    secret: Type.String({ description: 'The TOTP secret in base32, for manual entry.' }),
    otpauthUrl: Type.String({ description: 'The `otpauth://totp/…` URL the QR code holds.' }),
    qrCodeSvg: Type.String({ description: 'An SVG image of the QR code.' }),
  },
  { $id: 'TwoFactorEnrolment' },
);

export const SecondFactorToken = Type.Object(
  {
    token: Type.String({
      description:
        'A built-in token carrying the second factor (`amr: ["pwd","otp"]`); it expires with the token it was exchanged for.',
    }),
    expiresAt: DateTime,
  },
  { $id: 'SecondFactorToken' },
);

export const SignInToken = Type.Object(
  {
    token: Type.String({ description: 'A built-in bearer token, valid for 12 hours.' }),
    expiresAt: DateTime,
  },
  { $id: 'SignInToken' },
);

export const TwoFactorEnabled = Type.Object(
  {
    recoveryCodes: Type.Array(Type.String(), {
      description: 'Ten one-time recovery codes. Shown once; only their hashes are kept.',
    }),
    token: SecondFactorToken.properties.token,
    expiresAt: DateTime,
  },
  { $id: 'TwoFactorEnabled' },
);

const Code = Type.String({ minLength: 1, maxLength: 20, description: 'A 6-digit TOTP code.' });

export const ConfirmBody = Type.Object({ code: Code }, { additionalProperties: false });

export const Proof = Type.Object(
  {
    code: Type.Optional(Code),
    recoveryCode: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'A one-time recovery code.' }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `code` and `recoveryCode`.' },
);

export const RedeemBody = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 4096 }) },
  { additionalProperties: false },
);
