import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { BuiltInIssuer } from '../auth/built-in-issuer.ts';
import { checkSecondFactor, type SecondFactorProof } from '../auth/second-factor.ts';
import { hashRecoveryCode, newRecoveryCodes, newTotpEnrolment } from '../auth/totp.ts';
import { ApiError } from '../errors.ts';
import { recordAudit } from '../events/audit-log.ts';
import type { ApiServer } from './api-server.ts';
import { DateTime, errorResponses, iso } from './common-schemas.ts';
import type { ApiContext } from './context.ts';

const TwoFactorStatus = Type.Object(
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

const TwoFactorEnrolment = Type.Object(
  {
    secret: Type.String({ description: 'The TOTP secret in base32, for manual entry.' }),
    otpauthUrl: Type.String({ description: 'The `otpauth://totp/…` URL the QR code holds.' }),
    qrCodeSvg: Type.String({ description: 'An SVG image of the QR code.' }),
  },
  { $id: 'TwoFactorEnrolment' },
);

const SecondFactorToken = Type.Object(
  {
    token: Type.String({
      description:
        'A built-in token carrying the second factor (`amr: ["pwd","otp"]`); it expires with the token it was exchanged for.',
    }),
    expiresAt: DateTime,
  },
  { $id: 'SecondFactorToken' },
);

const SignInToken = Type.Object(
  {
    token: Type.String({ description: 'A built-in bearer token, valid for 12 hours.' }),
    expiresAt: DateTime,
  },
  { $id: 'SignInToken' },
);

const TwoFactorEnabled = Type.Object(
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
const Proof = Type.Object(
  {
    code: Type.Optional(Code),
    recoveryCode: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'A one-time recovery code.' }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `code` and `recoveryCode`.' },
);

const tags = ['auth'];

/** The built-in issuer, or 409: with an external OIDC provider the built-in 2FA does not apply. */
function builtInIssuer(context: ApiContext): BuiltInIssuer {
  if (!context.issuer) {
    throw new ApiError(
      'conflict',
      'Tokens come from an external identity provider here; two-factor authentication is configured there.',
    );
  }
  return context.issuer;
}

/** Second-factor operations are for people signing in, not for management keys. */
function assertSignInToken(request: FastifyRequest): void {
  if (request.principal.via !== 'token') {
    throw new ApiError('forbidden', 'Use a sign-in token for two-factor authentication.');
  }
}

function exactlyOne(proof: SecondFactorProof): SecondFactorProof {
  if ((proof.code === undefined) === (proof.recoveryCode === undefined)) {
    throw new ApiError('validation_failed', 'body needs exactly one of code and recoveryCode.');
  }
  return proof;
}

/**
 * A token like the caller's, now carrying the second factor. It expires when the caller's token
 * does, so the exchange never lengthens a sign-in.
 */
async function secondFactorToken(
  request: FastifyRequest,
  context: ApiContext,
  issuer: BuiltInIssuer,
): Promise<{ token: string; expiresAt: string }> {
  const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
  const identity = await context.verifyToken(bearer);
  const expiresAt = identity?.expiresAt ?? new Date(Date.now() + 12 * 3600 * 1000);
  const ttlSeconds = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  const token = await issuer.sign({
    email: request.principal.email,
    admin: request.principal.admin,
    ttlSeconds,
    secondFactor: true,
  });
  return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
}

/**
 * Two-factor authentication (TOTP, RFC 6238) for the built-in identity: enrol, confirm (which
 * turns it on and hands out recovery codes), disable, and the exchange of a first-factor token
 * for one carrying the second factor. The auth hook refuses a 2FA user's first-factor token on
 * every other route with 401 `second_factor_required`.
 */
export function registerAuthRoutes(app: ApiServer, context: ApiContext): void {
  const { db, secrets } = context;

  app.get(
    '/auth/2fa',
    {
      schema: {
        tags,
        summary: "The caller's two-factor authentication status",
        response: { 200: TwoFactorStatus, ...errorResponses() },
      },
    },
    async (request) => {
      const user = await db
        .selectFrom('users')
        .select(['totp_enabled_at', 'totp_pending_enc'])
        .where('id', '=', request.principal.userId)
        .executeTakeFirstOrThrow();
      const left = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('user_id', '=', request.principal.userId)
        .where('used_at', 'is', null)
        .executeTakeFirstOrThrow();
      return {
        available: context.issuer !== undefined,
        enabled: user.totp_enabled_at !== null,
        enabledAt: iso(user.totp_enabled_at),
        pending: user.totp_pending_enc !== null,
        recoveryCodesLeft: user.totp_enabled_at ? Number(left.n) : 0,
      };
    },
  );

  app.post(
    '/auth/2fa/enroll',
    {
      schema: {
        tags,
        summary: 'Start TOTP enrolment: a new secret and its QR code, pending until confirmed',
        response: { 200: TwoFactorEnrolment, ...errorResponses(403, 409) },
      },
    },
    async (request) => {
      builtInIssuer(context);
      assertSignInToken(request);
      const { userId, accountId, email } = request.principal;
      const enrolment = await newTotpEnrolment(email);
      await db.transaction().execute(async (tx) => {
        const updated = await tx
          .updateTable('users')
          .set({ totp_pending_enc: secrets.seal(enrolment.secret) })
          .where('id', '=', userId)
          .where('totp_enabled_at', 'is', null)
          .returning('id')
          .executeTakeFirst();
        if (!updated) {
          throw new ApiError(
            'conflict',
            'Two-factor authentication is already on; disable it first to enrol a new device.',
          );
        }
        await recordAudit(tx, {
          accountId,
          entityType: 'user',
          entityId: userId,
          eventType: 'two_factor.enrollment_started',
        });
      });
      return enrolment;
    },
  );

  app.post(
    '/auth/2fa/confirm',
    {
      schema: {
        tags,
        summary:
          'Confirm enrolment with a code: turns 2FA on; answers recovery codes (once) and a second-factor token',
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: { 200: TwoFactorEnabled, ...errorResponses(403, 409, 429) },
      },
    },
    async (request) => {
      const issuer = builtInIssuer(context);
      assertSignInToken(request);
      const { userId, accountId } = request.principal;
      await checkSecondFactor(db, secrets, userId, { code: request.body.code }, 'pending');
      const recoveryCodes = newRecoveryCodes();
      await db.transaction().execute(async (tx) => {
        const user = await tx
          .selectFrom('users')
          .select('totp_pending_enc')
          .where('id', '=', userId)
          .forUpdate()
          .executeTakeFirstOrThrow();
        if (!user.totp_pending_enc) {
          throw new ApiError('conflict', 'The enrolment was confirmed or replaced meanwhile.');
        }
        await tx
          .updateTable('users')
          .set({
            totp_secret_enc: user.totp_pending_enc,
            totp_pending_enc: null,
            totp_enabled_at: new Date(),
          })
          .where('id', '=', userId)
          .execute();
        await tx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
        await tx
          .insertInto('recovery_codes')
          .values(
            recoveryCodes.map((code) => ({
              id: randomUUID(),
              user_id: userId,
              code_hash: hashRecoveryCode(code),
            })),
          )
          .execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'user',
          entityId: userId,
          eventType: 'two_factor.enabled',
        });
      });
      // The code just proved the second factor: the caller need not wait for the next one.
      return { recoveryCodes, ...(await secondFactorToken(request, context, issuer)) };
    },
  );

  app.delete(
    '/auth/2fa',
    {
      schema: {
        tags,
        summary: 'Turn 2FA off (needs a current code or a recovery code)',
        body: Proof,
        response: { 204: Type.Null(), ...errorResponses(403, 409, 429) },
      },
    },
    async (request, reply) => {
      builtInIssuer(context);
      assertSignInToken(request);
      const { userId, accountId } = request.principal;
      const proof = exactlyOne(request.body ?? {});
      const { method } = await checkSecondFactor(db, secrets, userId, proof, 'enabled');
      await db.transaction().execute(async (tx) => {
        await tx
          .updateTable('users')
          .set({
            totp_secret_enc: null,
            totp_pending_enc: null,
            totp_enabled_at: null,
            totp_last_step: null,
          })
          .where('id', '=', userId)
          .execute();
        await tx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
        await recordAudit(tx, {
          accountId,
          entityType: 'user',
          entityId: userId,
          eventType: 'two_factor.disabled',
          payload: { method },
        });
      });
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/auth/2fa/verify',
    {
      schema: {
        tags,
        summary:
          'Exchange a first-factor token and a code (or recovery code) for a token carrying the second factor',
        body: Proof,
        response: { 200: SecondFactorToken, ...errorResponses(403, 409, 429) },
      },
    },
    async (request) => {
      const issuer = builtInIssuer(context);
      assertSignInToken(request);
      const { userId, accountId } = request.principal;
      const proof = exactlyOne(request.body ?? {});
      const { method } = await checkSecondFactor(db, secrets, userId, proof, 'enabled');
      await recordAudit(db, {
        accountId,
        entityType: 'user',
        entityId: userId,
        eventType: 'two_factor.verified',
        payload: { method },
      });
      return secondFactorToken(request, context, issuer);
    },
  );

  app.post(
    '/auth/login-links/redeem',
    {
      config: { public: true },
      schema: {
        tags,
        security: [],
        summary:
          'Exchange a one-time login link (from `replix start` or `replix login-link`) for a bearer token',
        description:
          'No bearer token needed. A link works once and for 15 minutes. Users with two-factor authentication on then exchange the token at POST /v1/auth/2fa/verify.',
        body: Type.Object(
          { code: Type.String({ minLength: 1, maxLength: 4096 }) },
          { additionalProperties: false },
        ),
        response: { 200: SignInToken, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const issuer = builtInIssuer(context);
      const link = await issuer.verifyLoginLink(request.body.code);
      const redeemed =
        link &&
        (await db
          .insertInto('login_link_redemptions')
          .values({ link_id: link.linkId })
          .onConflict((conflict) => conflict.column('link_id').doNothing())
          .returning('link_id')
          .executeTakeFirst());
      if (!link || !redeemed) {
        throw new ApiError(
          'not_found',
          'This login link is unknown, expired or already used. Ask for a new one: npx replix login-link --email <you>.',
        );
      }
      const ttlSeconds = 12 * 3600;
      const token = await issuer.sign({ email: link.email, admin: link.admin, ttlSeconds });
      request.log.info({ linkId: link.linkId }, 'login link redeemed');
      return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
    },
  );
}
