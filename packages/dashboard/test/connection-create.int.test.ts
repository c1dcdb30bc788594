import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { launchChromium, openDashboardPage, signInWithLink } from './browser.ts';

const USER = 'rx_browser_create';
const PASSWORD = 'create-Pa55word';
const NO_PASSWORD_USER = 'rx_browser_nopass';

/**
 * "Create connection" tests the connection first (issue 15): a failing test saves nothing and
 * says why, with a distinct "Save anyway"; a user without a password needs none.
 */
describe('creating a connection in the dashboard', () => {
  let browser: Browser;
  let cp: TestControlPlane;
  let source: TestDatabase;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${USER}'@'%';
       DROP USER IF EXISTS '${NO_PASSWORD_USER}'@'%'; CREATE USER '${NO_PASSWORD_USER}'@'%'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${NO_PASSWORD_USER}'@'%'`,
    );
    cp = await startTestControlPlane('pglite');
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; DROP USER IF EXISTS '${NO_PASSWORD_USER}'@'%'`,
    );
  });

  async function fillNewConnection(page: Page, name: string, user: string, password: string) {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Connections' })
      .click();
    await page.getByRole('link', { name: 'New connection' }).first().click();
    const url = new URL(source.url);
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Host', { exact: true }).fill(url.hostname);
    await page.getByLabel('Port', { exact: true }).fill(url.port);
    await page.getByLabel('User', { exact: true }).fill(user);
    await page.getByLabel('Password', { exact: true }).fill(password);
  }

  it('refuses a wrong password with the reason, and saves it only on "Save anyway"', {
    timeout: 120_000,
  }, async () => {
    const { page, problems, screenshot } = await openDashboardPage(browser);
    const email = 'create-flow@example.com';
    const code = await cp.context.issuer!.signLoginLink({ email });
    await signInWithLink(page, `${cp.url}/sign-in#link=${code}`);
    const token = await cp.token(email);
    const saved = async () =>
      (await cp.request('GET', '/v1/connections', { token })).body as { name: string }[];

    await fillNewConnection(page, 'wrong password', USER, 'not-the-password');
    await page.getByRole('button', { name: 'Create connection' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not saved' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(
      'Not saved: the connection test failed (the server refused the user or password). Authentication to the source database failed.',
    );
    await screenshot('connection-create-refused');
    expect(await saved()).toEqual([]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New connection');

    await refusal.getByRole('button', { name: 'Save anyway' }).click();
    await page.getByRole('heading', { level: 1, name: 'wrong password' }).waitFor();
    await page.getByText('never: saved untested').waitFor();
    expect((await saved()).map((c) => c.name)).toEqual(['wrong password']);

    // Editing the credentials is tested too: still wrong is refused the same way; switching to
    // the user without a password (and removing the stored one) is saved and tested ok.
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Password', { exact: true }).fill('still-not-it');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not saved' }).waitFor();
    await page.getByLabel('User', { exact: true }).fill(NO_PASSWORD_USER);
    await page.getByLabel('The user has no password: remove the stored one').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    const edited = page.getByRole('region', { name: 'Details' });
    await edited.getByText('succeeded').waitFor();
    expect(await edited.textContent()).toMatch(/Password\s*none/);

    // A user without a password: the field stays empty, the save's test passes.
    await fillNewConnection(page, 'no password', NO_PASSWORD_USER, '');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'no password' }).waitFor();
    const details = page.getByRole('region', { name: 'Details' });
    await details.getByText('succeeded').waitFor();
    expect(await details.textContent()).toMatch(/Password\s*none/);
    expect(problems).toEqual([]);
  });
});
