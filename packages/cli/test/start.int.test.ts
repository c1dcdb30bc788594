import { readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type StartedReplix, startEnvironment, startReplix } from './replix-start.ts';

/** Pids of processes whose working folder is an instance folder under `dataDir`. */
function instanceProcesses(dataDir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`).startsWith(join(dataDir, 'instances'));
      } catch {
        return false;
      }
    })
    .map(Number);
}

function field(banner: string, label: string): string {
  const line = banner.split('\n').find((l) => l.trimStart().startsWith(label));
  const value = line?.trim().slice(label.length).trim().split(/\s+/)[0];
  if (!value) throw new Error(`no "${label}" in the banner:\n${banner}`);
  return value;
}

describe('npx replix start', () => {
  let env: NodeJS.ProcessEnv;
  let running: StartedReplix | undefined;
  afterAll(async () => {
    await running?.stop();
    if (env?.REPLIX_DATA_DIR) rmSync(env.REPLIX_DATA_DIR, { recursive: true, force: true });
  });

  it('provisions the demo, prints a working instance and key, stops every child, and comes back with the same', {
    timeout: 240_000,
  }, async () => {
    env = await startEnvironment();
    const dataDir = env.REPLIX_DATA_DIR as string;
    running = await startReplix(env);
    const instanceUrl = field(running.banner, 'demo instance');
    const apiKey = field(running.banner, 'API key');
    const response = await fetch(`${instanceUrl}/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: 'customers { id name } ORDER BY id LIMIT 2',
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Array<{ id: number }> };
    expect(body.data.map((row) => row.id)).toEqual([1, 2]);
    expect(running.banner).toContain('--data-binary');
    expect(instanceProcesses(dataDir)).toHaveLength(1);

    // The dashboard answers, and the printed one-time link signs in as the demo account.
    const dashboard = field(running.banner, 'dashboard');
    expect((await fetch(dashboard, { headers: { accept: 'text/html' } })).status).toBe(200);
    const link = new URL(field(running.banner, 'sign in'));
    // The banner's way to another link signs in to the same account, the one that has the demo.
    expect(running.banner).toContain('another: npx replix login-link --email demo@replix.local');
    expect(link.pathname).toBe('/sign-in');
    const redeemed = await fetch(new URL('/v1/auth/login-links/redeem', dashboard), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: link.hash.replace('#link=', '') }),
    });
    const { token } = (await redeemed.json()) as { token: string };
    const account = await fetch(new URL('/v1/account', dashboard), {
      headers: { authorization: `Bearer ${token}` },
    });
    const demoAccount = (await account.json()) as {
      user: { email: string };
      limits: { pollModeMinSyncInterval: number };
      tosAccepted: boolean;
    };
    expect(demoAccount.user.email).toBe('demo@replix.local');
    // The local first sign-in has no terms step: replix start accepted them for its own user.
    expect(demoAccount.tosAccepted).toBe(true);
    // A local install has no plan floor on poll intervals (REPLIX_MIN_POLL_INTERVAL=1).
    expect(demoAccount.limits.pollModeMinSyncInterval).toBe(1);

    expect(await running.stop()).toBe(0);
    expect(instanceProcesses(dataDir)).toEqual([]);

    // The second start reuses the data folder: the same database and key, no new build.
    running = await startReplix(env);
    expect(field(running.banner, 'API key')).toBe(apiKey);
    // The demo database keeps its address across restarts.
    expect(field(running.banner, 'demo instance')).toBe(instanceUrl);
    expect(
      readdirSync(join(dataDir, 'artifacts')).filter((name) => !name.startsWith('.')),
    ).toHaveLength(1);
    const again = await fetch(`${field(running.banner, 'demo instance')}/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: 'products { id } LIMIT 1',
    });
    expect(again.status).toBe(200);
    // The terminal is for people: warnings of the restart as lines, never JSON records.
    expect(running.stderr()).not.toMatch(/^\s*\{/m);
  });
});
