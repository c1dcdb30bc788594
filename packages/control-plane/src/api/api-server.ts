import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Principal } from '../application/identity/principal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /v1 route; routes marked `public` have none. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** No bearer token needed (the OpenAPI document, the JWKS). */
    public?: boolean;
    /** Only members of the `service-admins` group. */
    admin?: boolean;
  }
}

/** The Fastify instance every route module registers on. A leaf module, so no import cycles through it. */
export type ApiServer = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;
