import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ApiServer } from '../src/api/api-server.ts';
import {
  dashboardConnectSources,
  dashboardPolicy,
  queryEndpointSources,
} from '../src/api/dashboard-security-headers.ts';
import { registerDashboardSite } from '../src/api/dashboard-site.ts';
import type { ControlPlaneConfig } from '../src/config.ts';

/** The parts of a configuration the policy reads. */
function configWith(parts: {
  oidc?: { issuer: string };
  kubernetes?: { hostPatterns: Record<string, string>; endpointScheme: 'http' | 'https' };
}): ControlPlaneConfig {
  return { oidc: undefined, kubernetes: undefined, ...parts } as unknown as ControlPlaneConfig;
}

describe("the dashboard page's policy", () => {
  it('lets the page reach the process driver’s endpoints: any port of the loopback', () => {
    expect(dashboardConnectSources(configWith({}))).toEqual(["'self'", 'http://127.0.0.1:*']);
  });

  it('adds the OIDC issuer’s origin, not its path', () => {
    const config = configWith({ oidc: { issuer: 'https://id.example.com:8443/realms/replix' } });
    expect(dashboardConnectSources(config)).toEqual([
      "'self'",
      'https://id.example.com:8443',
      'http://127.0.0.1:*',
    ]);
  });

  it("turns each region's Kubernetes host pattern into one wildcard source", () => {
    const config = configWith({
      kubernetes: {
        endpointScheme: 'https',
        hostPatterns: {
          'eu-west-1': '{database}.eu-west-1.db.example.com',
          'us-east-1': '{database}.us-east-1.db.example.com',
          // Two regions on one pattern give one source.
          'ap-south-1': '{database}.eu-west-1.db.example.com',
          // A label with more than the database widens to the domain beneath it.
          'sa-east-1': 'db-{database}.sa.example.com',
        },
      },
    });
    expect(queryEndpointSources(config)).toEqual([
      'https://*.eu-west-1.db.example.com',
      'https://*.us-east-1.db.example.com',
      'https://*.sa.example.com',
    ]);
  });

  it('allows no inline script, no eval, no plugin, no framing, and styles by nonce', () => {
    const policy = dashboardPolicy('bm9uY2U=', ["'self'", 'http://127.0.0.1:*']);
    expect(policy).toBe(
      [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'nonce-bm9uY2U='",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self' http://127.0.0.1:*",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
      ].join('; '),
    );
  });
});

describe('the page shown before the dashboard is built', () => {
  it('styles itself by the nonce, with no style attribute the policy would refuse', async () => {
    const app = Fastify();
    const site = await registerDashboardSite(app as unknown as ApiServer, '/nonexistent/dist');
    app.get('/', (_request, reply) => site.sendPage(reply, 'bm9uY2U='));
    const answer = await app.inject({ method: 'GET', url: '/' });
    await app.close();
    expect(answer.statusCode).toBe(503);
    expect(answer.body).toContain('<h1>The dashboard is not built</h1>');
    expect(answer.body).toContain('<style nonce="bm9uY2U=">');
    expect(answer.body).not.toMatch(/ style="/);
  });
});
