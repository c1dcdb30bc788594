import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  runWithRequestId,
  unexpectedErrorForLog,
  wellFormedRequestId,
} from '@replix/runtime/logger';
import { traceRequests } from '@replix/runtime/tracing';
import Fastify, { type FastifyError, type FastifyReply } from 'fastify';
import { actorOf, runAsActor } from '../adapters/events/audit-actor.ts';
import { authenticate } from '../application/identity/principal.ts';
import { hasRole, minimumRole } from '../application/identity/role-policy.ts';
import { registerLocalBillingPages } from '../application/payments/local-billing-pages.ts';
import { schemaForDocument } from '../application/resources/documented-schemas.ts';
import { ApiError, CONTROL_PLANE_ERRORS, type ControlPlaneErrorCode } from '../domain/errors.ts';
import { registerApiRateLimits } from './api-rate-limits.ts';
import type { ApiServer } from './api-server.ts';
import type { ApiContext } from './context.ts';
import { registerSecurityHeaders } from './dashboard-security-headers.ts';
import { registerDashboardSite } from './dashboard-site.ts';
import { registerArtifactFilesRoutes } from './routes/artifact-files-routes.ts';
import { registerRoutes } from './routes.ts';
import { refuseUnstorableStrings } from './unstorable-strings.ts';

const BODY_LIMIT = 1024 * 1024;
/** The one route a token lacking its second factor may call (auth/two-factor.ts). */
const SECOND_FACTOR_EXCHANGE = '/v1/auth/2fa/verify';

function sendError(
  reply: FastifyReply,
  code: ControlPlaneErrorCode,
  message: string,
  details: Readonly<Record<string, unknown>> = {},
): FastifyReply {
  return reply.status(CONTROL_PLANE_ERRORS[code].status).send({ ...details, error: code, message });
}

/** Says which field failed, in words a caller can act on, without echoing values. */
function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return 'The request is invalid.';
  const where = error.validationContext ?? 'request';
  const path = first.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : '';
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  const allowed = (first.params as { allowedValues?: unknown[] }).allowedValues;
  const extra = (first.params as { additionalProperty?: string }).additionalProperty;
  const named = missing ?? extra;
  const field = named ? [path, named].filter(Boolean).join('.') : path;
  const detail = missing
    ? 'is required'
    : extra
      ? 'is not a known field'
      : allowed
        ? `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
        : (first.message ?? 'is invalid');
  return field ? `${where}.${field} ${detail}.` : `${where} ${detail}.`;
}

/** The control-plane HTTP API: `/v1` routes, bearer auth, the flat error envelope, OpenAPI. */
export async function buildApi(context: ApiContext): Promise<ApiServer> {
  const app = Fastify({
    loggerInstance: context.log,
    bodyLimit: BODY_LIMIT,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return wellFormedRequestId(given) ? given : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Replix control plane',
        version: '1.0.0',
        description:
          'Manage connections, databases, builds, instances, API keys and the audit log. See docs/control-plane/README.md.',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An OIDC/built-in JWT, or a management key `rmk_…`.',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: ({ schema, url }) => ({ schema: schemaForDocument(schema) as typeof schema, url }),
  });

  // First: every line logged while serving the request, by any logger, names it.
  app.addHook('onRequest', (request, _reply, done) => runWithRequestId(request.id, done));
  // Helmet's headers on every answer; the dashboard page's CSP comes with it (protectPage).
  const protectPage = await registerSecurityHeaders(app as unknown as ApiServer, context.config);

  // With tracing on, a span per /v1 request (not the probes' polls nor the dashboard's files),
  // before the auth hook so refusals have theirs too; the handlers run inside it, so the goal a
  // request queues continues its trace (docs/tracing.md).
  traceRequests(app, { traced: (request) => request.url.startsWith('/v1/') });

  // Each /v1 request is counted once, after authentication: by its verified credential and
  // account, or by its address when it has none (api-rate-limits.ts).
  const rateLimit = await registerApiRateLimits(
    app as unknown as ApiServer,
    context.config.apiRateLimits,
  );

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (request.routeOptions.config.public || !request.routeOptions.url) {
      return rateLimit(request, reply);
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    const principal = match?.[1]
      ? await authenticate(context.db, context.verifyToken, match[1])
      : undefined;
    if (!principal) {
      await rateLimit(request, reply);
      reply.header('www-authenticate', 'Bearer');
      return sendError(reply, 'unauthorized', refusalMessage(match?.[1], context.config));
    }
    request.principal = principal;
    await rateLimit(request, reply);
    if (principal.needsSecondFactor && request.routeOptions.url !== SECOND_FACTOR_EXCHANGE) {
      return sendError(
        reply,
        'second_factor_required',
        'Two-factor authentication is on for this user: exchange this token with a code at POST /v1/auth/2fa/verify.',
      );
    }
    if (request.routeOptions.config.admin) {
      if (!principal.admin) {
        return sendError(
          reply,
          'forbidden',
          'This operation is for members of the service-admins group.',
        );
      }
      return;
    }
    const needed = minimumRole(request.method, request.routeOptions.url);
    if (!hasRole(principal.role, needed)) {
      return sendError(
        reply,
        'forbidden',
        `This operation needs the ${needed} role in the account; you are a ${principal.role}.`,
      );
    }
  });

  app.addHook('preValidation', refuseUnstorableStrings);

  // The audit log names who made each change: the handler runs as the caller. A callback hook,
  // just before the handler (after the body is read), so the handler's async work inherits it.
  app.addHook('preHandler', (request, _reply, done) => {
    if (!request.principal) return done();
    runAsActor(actorOf(request.principal), done);
  });

  // Actions without a body (provision, terminate, …) are often sent with a JSON content type
  // and nothing in it, as curl and most SDKs do: read an empty JSON body as no body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (String(body).trim() === '') return done(null, undefined);
    parseJson(request, String(body), done);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError) {
      return sendError(reply, error.code, error.message, error.details);
    }
    if (error.validation) return sendError(reply, 'validation_failed', validationMessage(error));
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, 'payload_too_large', 'The request body is larger than 1 MiB.');
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own 4xx: malformed JSON, unsupported media type, empty JSON body.
      return sendError(reply, 'validation_failed', error.message);
    }
    // The one failure its message does not explain: logged with its first frames (paths relative
    // to the installation), answered without them.
    request.log.error({ err: unexpectedErrorForLog(error) }, 'request failed');
    return sendError(
      reply,
      'internal_error',
      'Something went wrong on our side. It has been logged.',
    );
  });

  const dashboard = await registerDashboardSite(app as unknown as ApiServer);
  app.setNotFoundHandler((request, reply) =>
    dashboard.servesPage(request)
      ? dashboard.sendPage(reply, protectPage(reply))
      : sendError(reply, 'not_found', 'No such route.'),
  );

  await app.register(async (v1) => registerRoutes(v1 as ApiServer, context), { prefix: '/v1' });
  // The artifact files instance pods fetch (Kubernetes driver), outside /v1: not for users.
  registerArtifactFilesRoutes(app as unknown as ApiServer, context);
  // The local payment provider's checkout and portal pages, outside /v1 (they are HTML).
  registerLocalBillingPages(app as unknown as ApiServer, context);

  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, () =>
    app.swagger(),
  );
  return app as unknown as ApiServer;
}

/**
 * Why a request was refused: no token, or one this control plane does not accept. Built-in
 * tokens are signed with the key of a data folder, so the usual cause of a refused one on a
 * local install is a CLI run with another REPLIX_DATA_DIR; the message says so (no path).
 */
function refusalMessage(token: string | undefined, config: ApiContext['config']): string {
  if (token === undefined) return 'A valid bearer token is required.';
  if (config.oidc)
    return 'The bearer token is not valid here: malformed, expired or not for this API.';
  return 'The bearer token is not valid here: malformed, expired, or signed with the key of another data folder. `replix token` and `replix login --email` sign with the key of REPLIX_DATA_DIR (default ~/.replix): run them with the data folder this control plane uses.';
}
