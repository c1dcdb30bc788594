import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type LocalOidc, startLocalOidc } from '@replix/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { launchChromium } from '../../dashboard/test/browser.ts';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/replix.js', import.meta.url));
const AUDIENCE = 'urn:replix:api';
const CLI_CLIENT = 'replix-cli';

interface Login {
  readonly child: ChildProcess;
  /** Resolves with the verification URI that carries the code, once the CLI printed it. */
  readonly completeUri: Promise<string>;
  readonly exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `replix login` (no options) as a child process, its output collected. */
function startLogin(env: Record<string, string>): Login {
  const child = spawn(process.execPath, [bin, 'login'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const completeUri = new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /\(or open (\S+), which carries the code\)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', () => reject(new Error(`replix login exited early: ${stdout}${stderr}`)));
  });
  completeUri.catch(() => undefined);
  const exited = once(child, 'exit').then(([code]) => ({
    code: code as number | null,
    stdout,
    stderr,
  }));
  return { child, completeUri, exited };
}

/** A page that reaches only this machine (the provider's pages ask for a web font). */
async function loopbackPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage();
  await page.context().route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
  return page;
}

/** The user's part at the provider: confirm the code, sign in with its dev form, consent. */
async function confirmAtIssuer(page: Page, uri: string, login: string): Promise<void> {
  await page.goto(uri);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Sign-in Success' }).waitFor();
}

/**
 * `replix login` against a control plane configured with a real OpenID provider running here:
 * the device authorization grant, the user's part done in Chromium at the provider's pages.
 */
describe('replix login with an OIDC issuer (device flow)', () => {
  let idp: LocalOidc;
  let cp: TestControlPlane;
  let browser: Browser;
  let dataDir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    idp = await startLocalOidc({
      audience: AUDIENCE,
      dashboard: { clientId: 'replix-dashboard', redirectUris: [], postLogoutRedirectUris: [] },
      cli: { clientId: CLI_CLIENT },
    });
    cp = await startTestControlPlane('pglite', {
      roles: ['api'],
      env: {
        REPLIX_OIDC_ISSUER: idp.issuer,
        REPLIX_OIDC_AUDIENCE: AUDIENCE,
        REPLIX_OIDC_CLI_CLIENT_ID: CLI_CLIENT,
      },
    });
    browser = await launchChromium();
    dataDir = mkdtempSync(join(tmpdir(), 'replix-device-login-'));
    env = { REPLIX_DATA_DIR: dataDir, REPLIX_API_URL: cp.url };
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    await idp?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('signs in at the issuer, saves the token, and the API commands use it', {
    timeout: 60_000,
  }, async () => {
    const login = startLogin(env);
    const uri = await login.completeUri;
    expect(uri.startsWith(`${idp.issuer}/device`)).toBe(true);
    const page = await loopbackPage(browser);
    await confirmAtIssuer(page, uri, 'device-user');
    await page.close();
    const result = await login.exited;
    expect(result.stdout).toMatch(
      /To sign in, open \S+\/device and enter the code [A-Z]{4}-[A-Z]{4}/,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const path = join(dataDir, 'credentials.json');
    expect(result.stdout).toContain(
      `Logged in to ${cp.url} as device-user@example.com; token saved in ${path}.`,
    );
    const saved = JSON.parse(readFileSync(path, 'utf8'));
    expect(saved).toEqual({ apiUrl: cp.url, token: expect.stringMatching(/^ey/) });

    const { stdout } = await run(process.execPath, [bin, 'connections', 'list'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, REPLIX_DATA_DIR: dataDir },
    });
    expect(stdout).toBe('(no connections)\n');
    const account = await cp.request('GET', '/v1/account', { token: saved.token });
    expect(account.body.user.email).toBe('device-user@example.com');
  });

  it('says so and exits 1 when the user aborts at the issuer', { timeout: 60_000 }, async () => {
    const otherDir = mkdtempSync(join(tmpdir(), 'replix-device-denied-'));
    try {
      const login = startLogin({ ...env, REPLIX_DATA_DIR: otherDir });
      const page = await loopbackPage(browser);
      await page.goto(await login.completeUri);
      await page.getByRole('button', { name: '[ Abort ]' }).click();
      await page.close();
      const result = await login.exited;
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('replix login: sign-in was denied at the identity provider.\n');
      expect(existsSync(join(otherDir, 'credentials.json'))).toBe(false);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('stops on Ctrl-C with exit code 130', { timeout: 30_000 }, async () => {
    const login = startLogin(env);
    await login.completeUri;
    login.child.kill('SIGINT');
    const result = await login.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toBe('replix login: sign-in cancelled.\n');
  });

  it('serves where to sign in without a token', async () => {
    const response = await cp.request('GET', '/v1/auth/config');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      oidc: {
        issuer: idp.issuer,
        scopes: 'openid email profile',
        dashboardClientId: null,
        cliClientId: CLI_CLIENT,
      },
    });
  });
});
