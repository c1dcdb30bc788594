import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  ConfirmBody,
  Proof,
  RedeemBody,
  SecondFactorToken,
  SignInToken,
  TwoFactorEnabled,
  TwoFactorEnrolment,
  TwoFactorStatus,
} from '../../application/resources/auth/auth-schemas.ts';
import {
  type Caller,
  confirmEnrolment,
  disableTwoFactor,
  redeemLoginLink,
  startEnrolment,
  twoFactorStatus,
  verifySecondFactor,
} from '../../application/resources/auth/auth-service.ts';
import { errorResponses } from '../../application/resources/common-schemas.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const tags = ['auth'];

function callerOf(request: FastifyRequest): Caller {
  return { principal: request.principal, authorization: request.headers.authorization };
}

/** Two-factor authentication and login links (auth-service.ts). */
export function registerAuthRoutes(app: ApiServer, context: ApiContext): void {
  app.get(
    '/auth/2fa',
    {
      schema: {
        tags,
        summary: "The caller's two-factor authentication status",
        response: { 200: TwoFactorStatus, ...errorResponses() },
      },
    },
    async (request) => twoFactorStatus(context, request.principal.userId),
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
    async (request) => startEnrolment(context, request.principal),
  );

  app.post(
    '/auth/2fa/confirm',
    {
      schema: {
        tags,
        summary:
          'Confirm enrolment with a code: turns 2FA on; answers recovery codes (once) and a second-factor token',
        body: ConfirmBody,
        response: { 200: TwoFactorEnabled, ...errorResponses(403, 409, 429) },
      },
    },
    async (request) => confirmEnrolment(context, callerOf(request), request.body.code),
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
      await disableTwoFactor(context, request.principal, request.body ?? {});
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
    async (request) => verifySecondFactor(context, callerOf(request), request.body ?? {}),
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
        body: RedeemBody,
        response: { 200: SignInToken, ...errorResponses(404, 409) },
      },
    },
    async (request) => {
      const { linkId, token, expiresAt } = await redeemLoginLink(context, request.body.code);
      request.log.info({ linkId }, 'login link redeemed');
      return { token, expiresAt };
    },
  );
}
