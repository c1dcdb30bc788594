import { freePort, type LocalOidc, startLocalOidc } from '@replix/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { EVENTUALLY, launchChromium, openDashboardPage, signInWithLink } from './browser.ts';

const AUDIENCE = 'urn:replix:api';
const DASHBOARD_CLIENT = 'replix-dashboard';
const LOGIN = 'dash-user';
const EMAIL = 'dash-user@example.com';

/** The provider's development login form, then its consent page. */
async function signInAtProvider(page: Page): Promise<void> {
  await page.locator('input[name=login]').fill(LOGIN);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** The claims of a JWT, unverified (the control plane verified it). */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
}

/**
 * The dashboard served by a real control plane whose issuer is a real OpenID provider running
 * here: the authorization-code flow with PKCE in Chromium, the token kept out of
 * localStorage, a reload signed in again without a prompt, and sign-out at the issuer; and
 * the built-in issuer's token kept out of localStorage the same way.
 */
describe('the dashboard signing in at an OIDC issuer', () => {
  let idp: LocalOidc;
  let cp: TestControlPlane;
  let browser: Browser;

  beforeAll(async () => {
    const port = await freePort();
    const dashboard = `http://127.0.0.1:${port}`;
    idp = await startLocalOidc({
      audience: AUDIENCE,
      dashboard: {
        clientId: DASHBOARD_CLIENT,
        redirectUris: [`${dashboard}/oidc/callback`],
        postLogoutRedirectUris: [`${dashboard}/sign-in`],
      },
      cli: { clientId: 'replix-cli' },
    });
    cp = await startTestControlPlane('pglite', {
      roles: ['api'],
      env: {
        REPLIX_API_PORT: String(port),
        REPLIX_OIDC_ISSUER: idp.issuer,
        REPLIX_OIDC_AUDIENCE: AUDIENCE,
        REPLIX_OIDC_DASHBOARD_CLIENT_ID: DASHBOARD_CLIENT,
      },
    });
    expect(cp.url).toBe(dashboard);
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    await idp?.close();
  });

  it('signs in with PKCE, keeps the token out of storage, survives a reload and signs out at the issuer', {
    timeout: 120_000,
  }, async () => {
    const { page, problems, screenshot } = await openDashboardPage(browser);
    // The provider's pages ask for a web font: nothing leaves this machine.
    await page.context().route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
    // Every address the tab was sent to, redirects included.
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
        visited.push(request.url());
      }
    });
    const bearers: string[] = [];
    page.on('request', (request) => {
      const authorization = request.headers().authorization;
      if (request.url().includes('/v1/') && authorization) bearers.push(authorization);
    });

    await page.goto(`${cp.url}/team`);
    await page.getByRole('heading', { name: 'Sign in to Replix' }).waitFor();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${idp.issuer}/**`);
    const authorize = new URL(visited.find((url) => url.startsWith(`${idp.issuer}/auth`))!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('client_id')).toBe(DASHBOARD_CLIENT);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    await signInAtProvider(page);

    // Back through /oidc/callback to the page asked for, past the first sign-in's terms.
    await page.getByLabel(/I accept the Replix terms of service/).check();
    await page.getByRole('button', { name: 'Accept and continue' }).click();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    await expect
      .poll(() => page.getByRole('main').getByText(EMAIL).count(), EVENTUALLY)
      .toBeGreaterThan(0);
    await screenshot('issuer-signed-in');
    expect(new URL(page.url()).pathname).toBe('/team');

    const token = bearers.at(-1)!.replace(/^Bearer /, '');
    expect(claimsOf(token)).toMatchObject({ iss: idp.issuer, aud: AUDIENCE, email: EMAIL });
    const stored = await page.evaluate(() => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
    }));
    expect(stored.local).toBe('{}');
    expect(stored.session).not.toContain(token);

    // A reload: signed in again at the issuer without its login form.
    const beforeReload = visited.length;
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
    const afterReload = visited.slice(beforeReload);
    expect(afterReload.some((url) => url.includes('prompt=none'))).toBe(true);
    expect(afterReload.some((url) => url.startsWith(`${idp.issuer}/interaction/`))).toBe(false);
    expect(new URL(page.url()).pathname).toBe('/team');

    // Sign out: the issuer's logout with the ID token, then back to the dashboard's sign-in.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${idp.issuer}/**`);
    const logout = new URL(visited.find((url) => url.startsWith(`${idp.issuer}/session/end?`))!);
    expect(logout.searchParams.get('id_token_hint')).toMatch(/^ey/);
    expect(logout.searchParams.get('post_logout_redirect_uri')).toBe(`${cp.url}/sign-in`);
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.waitForURL(`${cp.url}/sign-in`);
    await page.getByRole('heading', { name: 'Sign in to Replix' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    // A tab that was signed in tries again without a prompt; with the issuer's session gone
    // (login_required) it shows the sign-in button rather than the issuer's form.
    await page.evaluate(() => sessionStorage.setItem('replix.issuer-session', '1'));
    const beforeRetry = visited.length;
    await page.goto(`${cp.url}/team`);
    await expect.poll(() => new URL(page.url()).pathname, EVENTUALLY).toBe('/sign-in');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/team');
    const retried = visited.slice(beforeRetry);
    expect(retried.some((url) => url.includes('prompt=none'))).toBe(true);
    expect(retried.some((url) => url.includes('error=login_required'))).toBe(true);

    // Signing in again asks for the login: the issuer's session is gone.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('input[name=login]').waitFor();
    expect(problems).toEqual([]);
  });

  it('keeps a built-in token out of localStorage, in the tab for its reloads', {
    timeout: 120_000,
  }, async () => {
    const builtIn = await startTestControlPlane('pglite', { roles: ['api'] });
    try {
      const { page, problems } = await openDashboardPage(browser);
      const code = await builtIn.context.issuer!.signLoginLink({ email: 'tab@example.com' });
      await signInWithLink(page, `${builtIn.url}/sign-in#link=${code}`);
      const stored = () =>
        page.evaluate(() => ({ local: localStorage.length, session: { ...sessionStorage } }));
      const before = await stored();
      expect(before.local).toBe(0);
      expect(JSON.parse(before.session['replix.session']!).token).toMatch(/^ey/);
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Databases' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Replix' }).waitFor();
      expect(await stored()).toEqual({ local: 0, session: {} });
      expect(problems).toEqual([]);
    } finally {
      await builtIn.close();
    }
  });
});
