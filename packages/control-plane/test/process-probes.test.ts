import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenStore, openStore } from '../src/adapters/store/open-store.ts';
import { DEFAULT_PROBE_WINDOWS, ProcessProbes } from '../src/api/process-probes.ts';
import { LoopPulse } from '../src/roles/loop-pulse.ts';
import { type ProbeServer, startProbeServer } from '../src/roles/probe-server.ts';

/** A clock the test moves by hand, so windows are crossed without waiting. */
function manualClock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('process probes over role loops', () => {
  let store: OpenStore;
  beforeAll(async () => {
    store = await openStore({ inMemory: true });
  }, 60_000);
  afterAll(() => store.close());

  it('an api-only process is ready and live while its store answers', async () => {
    const probes = new ProcessProbes(store.db);
    expect(await probes.ready()).toEqual({ status: 200, body: { status: 'ok' } });
    expect(probes.live()).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('is not ready until the loop completes a pass, nor once its last pass is too old', async () => {
    const clock = manualClock();
    const pulse = new LoopPulse('reconciler', 500, clock.now);
    const probes = new ProcessProbes(store.db);
    probes.watch(pulse);
    expect(await probes.ready()).toEqual({
      status: 503,
      body: { error: 'not_ready', message: 'The reconciler loop has not completed a pass yet.' },
    });
    pulse.passed();
    expect((await probes.ready()).status).toBe(200);
    clock.advance(60_001);
    expect(await probes.ready()).toEqual({
      status: 503,
      body: {
        error: 'not_ready',
        message: 'The reconciler loop has not completed a pass in 60 s.',
      },
    });
    pulse.passed();
    expect((await probes.ready()).status).toBe(200);
  });

  it('a loop that keeps failing is live but not ready; one that stops turning is not live', async () => {
    const clock = manualClock();
    const pulse = new LoopPulse('builder', 10_000, clock.now);
    const probes = new ProcessProbes(store.db);
    probes.watch(pulse);
    pulse.passed();
    for (let turn = 0; turn < 40; turn++) {
      clock.advance(10_000);
      pulse.failed();
    }
    expect(probes.live().status).toBe(200);
    expect((await probes.ready()).body).toEqual({
      error: 'not_ready',
      message: 'The builder loop has not completed a pass in 60 s.',
    });
    clock.advance(300_001);
    expect(probes.live()).toEqual({
      status: 503,
      body: { error: 'not_ready', message: 'The builder loop has not turned in 300 s.' },
    });
  });

  it('a slow loop gets windows of several of its periods', () => {
    const pulse = new LoopPulse('health-monitor', 120_000);
    expect(DEFAULT_PROBE_WINDOWS.readyWithinMs(pulse)).toBe(360_000);
    expect(DEFAULT_PROBE_WINDOWS.liveWithinMs(pulse)).toBe(1_200_000);
  });

  it('every loop of the process must be ready', async () => {
    const clock = manualClock();
    const probes = new ProcessProbes(store.db);
    const reconciler = new LoopPulse('reconciler', 500, clock.now);
    const monitor = new LoopPulse('health-monitor', 2000, clock.now);
    probes.watch(reconciler);
    probes.watch(monitor);
    reconciler.passed();
    expect((await probes.ready()).body).toEqual({
      error: 'not_ready',
      message: 'The health-monitor loop has not completed a pass yet.',
    });
    monitor.passed();
    expect((await probes.ready()).status).toBe(200);
  });

  it('is not ready when the store does not answer, and says nothing about it but that', {
    timeout: 30_000,
  }, async () => {
    const closed = await openStore({ inMemory: true });
    await closed.close();
    const probes = new ProcessProbes(closed.db, { ...DEFAULT_PROBE_WINDOWS, storeTimeoutMs: 1000 });
    expect(await probes.ready()).toEqual({
      status: 503,
      body: { error: 'not_ready', message: 'The store did not answer.' },
    });
    expect(probes.live().status).toBe(200);
  });
});

describe('the probe listener', () => {
  let store: OpenStore;
  let server: ProbeServer;
  let pulse: LoopPulse;
  beforeAll(async () => {
    store = await openStore({ inMemory: true });
    const probes = new ProcessProbes(store.db);
    pulse = new LoopPulse('reconciler', 500);
    probes.watch(pulse);
    server = await startProbeServer(probes, { host: '127.0.0.1', port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server.close();
    await store.close();
  });

  it('listens on loopback on the port it was given (0: any free one)', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers /ready 503 then 200 once the loop passed, and /live 200', async () => {
    const before = await fetch(`${server.url}/ready`);
    expect(before.status).toBe(503);
    expect(before.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await before.json()).toEqual({
      error: 'not_ready',
      message: 'The reconciler loop has not completed a pass yet.',
    });
    pulse.passed();
    const after = await fetch(`${server.url}/ready?verbose=1`);
    expect(after.status).toBe(200);
    expect(after.headers.get('cache-control')).toBe('no-store');
    expect(await after.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/live`)).status).toBe(200);
  });

  it('answers HEAD without a body', async () => {
    const response = await fetch(`${server.url}/live`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('serves nothing else: other paths and methods get 404 in the envelope', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/v1/databases'],
      ['GET', '/ready/extra'],
      ['GET', '/READY'],
      ['GET', '/%2e%2e/etc/passwd'],
      ['POST', '/ready'],
      ['DELETE', '/live'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`, {
        method,
        ...(method === 'POST' ? { body: 'x'.repeat(100_000) } : {}),
      });
      expect({ method, path, status: response.status, body: await response.json() }).toEqual({
        method,
        path,
        status: 404,
        body: {
          error: 'not_found',
          message: 'Only GET /live, GET /ready and GET /metrics are served here.',
        },
      });
    }
  });

  it('a taken port fails the start with the reason', async () => {
    const port = Number(new URL(server.url).port);
    await expect(
      startProbeServer(new ProcessProbes(store.db), { host: '127.0.0.1', port }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
