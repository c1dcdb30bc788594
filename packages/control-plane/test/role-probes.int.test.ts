import { testPostgres } from '@replix/testkit/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import type { RoleName } from '../src/domain/role-names.ts';
import { startTestControlPlane, type TestControlPlane } from './control-plane-harness.ts';
import { eventually } from './reconciler-fixtures.ts';

async function probe(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/** Takes the store's database away from every client, as an outage would, and gives it back. */
async function storeOutage(plane: TestControlPlane): Promise<{ end(): Promise<void> }> {
  const name = new URL(plane.context.config.databaseUrl as string).pathname.slice(1);
  await testPostgres().exec(
    `ALTER DATABASE "${name}" ALLOW_CONNECTIONS false;
     SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
  );
  return {
    end: () => testPostgres().exec(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`),
  };
}

/** Each role run alone, as a Deployment runs it, answers its probes; a store outage makes it unready, not dead. */
describe('per-role probes', () => {
  let plane: TestControlPlane | undefined;
  afterEach(async () => {
    await plane?.close();
    plane = undefined;
  });

  const roles: Array<{ role: RoleName; where: (p: TestControlPlane) => string }> = [
    { role: 'api', where: (p) => p.url },
    { role: 'reconciler', where: (p) => p.probeUrl as string },
    { role: 'builder', where: (p) => p.probeUrl as string },
    { role: 'health-monitor', where: (p) => p.probeUrl as string },
  ];

  for (const { role, where } of roles) {
    it(`${role}: ready once its loop ran, unready while the store is away, ready again after`, {
      timeout: 90_000,
    }, async () => {
      plane = await startTestControlPlane('postgres', {
        roles: [role],
        env: role === 'api' ? {} : { REPLIX_PROBE_PORT: '0' },
      });
      const base = where(plane);
      expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      await eventually(
        async () => (await probe(`${base}/ready`)).status === 200,
        30_000,
        `${role} to be ready`,
      );
      expect(await probe(`${base}/live`)).toEqual({ status: 200, body: { status: 'ok' } });

      const outage = await storeOutage(plane);
      try {
        expect(await probe(`${base}/ready`)).toEqual({
          status: 503,
          body: { error: 'not_ready', message: 'The store did not answer.' },
        });
        expect((await probe(`${base}/live`)).status).toBe(200);
      } finally {
        await outage.end();
      }
      await eventually(
        async () => (await probe(`${base}/ready`)).status === 200,
        30_000,
        `${role} to be ready again`,
      );
    });
  }

  it('a background role starts and gets ready while the OIDC issuer cannot be reached; the api does not start', {
    timeout: 60_000,
  }, async () => {
    // Nothing listens on port 9 of loopback: discovery fails at once.
    const env = { REPLIX_OIDC_ISSUER: 'http://127.0.0.1:9/realms/replix', REPLIX_PROBE_PORT: '0' };
    plane = await startTestControlPlane('pglite', { roles: ['builder'], env });
    const base = plane.probeUrl as string;
    await eventually(async () => (await probe(`${base}/ready`)).status === 200, 30_000, 'ready');
    await expect(startTestControlPlane('pglite', { roles: ['api'], env })).rejects.toThrow();
  });

  it('a process without REPLIX_PROBE_PORT opens no probe listener', {
    timeout: 60_000,
  }, async () => {
    plane = await startTestControlPlane('pglite', { roles: ['health-monitor'] });
    expect(plane.probeUrl).toBeUndefined();
  });

  it('the api role beside other roles serves /ready once their loops ran; probes stay out of the contract', {
    timeout: 60_000,
  }, async () => {
    plane = await startTestControlPlane('pglite', { roles: ['api', 'reconciler', 'builder'] });
    const base = plane.url;
    await eventually(async () => (await probe(`${base}/ready`)).status === 200, 30_000, 'ready');
    // The probes are public and out of the API's contract.
    const openapi = (await plane.request('GET', '/v1/openapi.json')).body;
    expect(Object.keys(openapi.paths)).not.toContain('/ready');
    expect(Object.keys(openapi.paths)).not.toContain('/live');
  });
});
