import { randomBytes } from 'node:crypto';
import helmet from '@fastify/helmet';
import type { FastifyReply } from 'fastify';
import type { ControlPlaneConfig } from '../config.ts';
import type { ApiServer } from './api-server.ts';

/**
 * The browser-facing defences (docs/dashboard.md, "Security"): @fastify/helmet's headers on every
 * answer (`X-Content-Type-Options: nosniff`, `X-Frame-Options`, `Referrer-Policy`, the
 * cross-origin policies, …), and on the dashboard's page a strict Content-Security-Policy with a
 * fresh style nonce per answer. Scripts come from this origin only, never inline nor `eval`;
 * styles from this origin, plus the elements CodeMirror injects, which carry the nonce
 * (`EditorView.cspNonce`, read from the page's script tag). The page may call this origin's
 * `/v1`, the OIDC issuer (discovery and token requests) and the databases' query endpoints,
 * which the playground queries straight from the browser.
 */

/** Where the query endpoints the playground calls live, as CSP sources, for the driver in use. */
export function queryEndpointSources(config: ControlPlaneConfig): string[] {
  const kubernetes = config.kubernetes;
  // The process driver's endpoints: a port of this machine's loopback each (process-driver.ts).
  if (!kubernetes) return ['http://127.0.0.1:*'];
  const scheme = kubernetes.endpointScheme;
  return [
    ...new Set(
      Object.values(kubernetes.hostPatterns).map((pattern) => {
        // `{database}.eu.db.example.com`: every database's host is one label below the rest.
        // A label that holds more than `{database}` widens to the domain beneath it: CSP's
        // only wildcard is a whole leading label.
        const labels = pattern.split('.');
        const last = labels.findLastIndex((label) => label.includes('{database}'));
        const rest = labels.slice(last + 1).join('.');
        return rest ? `${scheme}://*.${rest}` : `${scheme}:`;
      }),
    ),
  ];
}

/** The `connect-src` of the dashboard: its own origin, the OIDC issuer and the query endpoints. */
export function dashboardConnectSources(config: ControlPlaneConfig): string[] {
  const issuer = config.oidc ? [new URL(config.oidc.issuer).origin] : [];
  return ["'self'", ...issuer, ...queryEndpointSources(config)];
}

/** The dashboard page's policy, its style nonce given. */
export function dashboardPolicy(nonce: string, connectSources: readonly string[]): string {
  const directives: Array<[string, readonly string[]]> = [
    ['default-src', ["'self'"]],
    ['script-src', ["'self'"]],
    ['style-src', ["'self'", `'nonce-${nonce}'`]],
    // The favicon is a data: URL; uPlot draws on canvas.
    ['img-src', ["'self'", 'data:']],
    ['font-src', ["'self'"]],
    ['connect-src', connectSources],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', ["'none'"]],
  ];
  return directives.map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}

/**
 * Registers the headers every answer gets and returns what the page's answer calls: it sets
 * the page's policy with a fresh nonce and gives the nonce, to be written on the page's script.
 */
export async function registerSecurityHeaders(
  app: ApiServer,
  config: ControlPlaneConfig,
): Promise<(reply: FastifyReply) => string> {
  await app.register(helmet, {
    global: true,
    // Only the page has a policy; JSON and the assets need none.
    contentSecurityPolicy: false,
    // HSTS is for the operator's TLS terminator to send: the API itself speaks plain http.
    strictTransportSecurity: false,
    xFrameOptions: { action: 'deny' },
  });
  const connectSources = dashboardConnectSources(config);
  return (reply) => {
    const nonce = randomBytes(16).toString('base64');
    reply.header('content-security-policy', dashboardPolicy(nonce, connectSources));
    return nonce;
  };
}
