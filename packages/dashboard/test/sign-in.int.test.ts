import { TOTP } from 'otpauth';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { EVENTUALLY, launchChromium, openDashboardPage, signInWithLink } from './browser.ts';

/**
 * Signing in to the dashboard: a used link is refused, a pasted token works, an unknown page
 * address sends a signed-out visitor to sign-in and back, and a user with two-factor
 * authentication on passes the code step.
 */
describe('signing in to the dashboard', () => {
  let browser: Browser;
  let cp: TestControlPlane;
  const link = async (email: string) =>
    `${cp.url}/sign-in#link=${await cp.context.issuer!.signLoginLink({ email })}`;

  beforeAll(async () => {
    cp = await startTestControlPlane('pglite');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
  });

  it('refuses a link used before, in the API’s words, and takes a pasted token', async () => {
    const { page, problems } = await openDashboardPage(browser);
    const once = await link('twice@example.com');
    await signInWithLink(page, once);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Replix' }).waitFor();

    await page.goto(once);
    await expect
      .poll(() => page.getByRole('alert').textContent(), EVENTUALLY)
      .toMatch(/already used/);
    await page.getByLabel('Login link or bearer token').fill(await cp.token('twice@example.com'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Databases' }).waitFor();
    expect(problems).toEqual([]);
  });

  it('sends a signed-out visitor to sign-in and back to the page they asked for', async () => {
    const { page } = await openDashboardPage(browser);
    await page.goto(`${cp.url}/audit`);
    await page.getByRole('heading', { name: 'Sign in to Replix' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/audit');
    await page.getByLabel('Login link or bearer token').fill(await link('back@example.com'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel(/I accept the Replix terms of service/).check();
    await page.getByRole('button', { name: 'Accept and continue' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
  });

  it('asks a user with two-factor authentication for a code after the link', async () => {
    const email = 'totp@example.com';
    const token = await cp.token(email);
    await cp.request('POST', '/v1/account/accept-tos', { token, body: {} });
    const enrolled = await cp.request('POST', '/v1/auth/2fa/enroll', { token });
    const totp = new TOTP({ secret: enrolled.body.secret });
    const confirmed = await cp.request('POST', '/v1/auth/2fa/confirm', {
      token,
      body: { code: totp.generate({ timestamp: Date.now() - 30_000 }) },
    });
    expect(confirmed.status).toBe(200);

    const { page, problems, screenshot } = await openDashboardPage(browser);
    await page.goto(await link(email));
    await page.getByRole('heading', { name: 'Two-factor authentication' }).waitFor();
    await page.getByLabel('Code').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').waitFor();
    await screenshot('sign-in-second-factor');
    // A code of this time step (the confirmation above used the previous one).
    await page.getByLabel('Code').fill(totp.generate());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { level: 1, name: 'Databases' }).waitFor();
    expect(problems).toEqual([]);
  });
});
