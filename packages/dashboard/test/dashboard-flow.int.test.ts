import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { EVENTUALLY, launchChromium, openDashboardPage, signInWithLink } from './browser.ts';

const SOURCE_SQL = `
  CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
  INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');`;
const USER = 'rx_browser';
const PASSWORD = 'browser-Pa55word';

/** Goes to a main page by the side navigation. */
async function navigate(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label }).click();
}

/**
 * The end-to-end path in headless Chromium, against a control plane started here with
 * every role and a source on the harness's MariaDB: sign in, connection (with its test), database,
 * provision until running, API key, a query in the playground, a webhook, the audit log; and a
 * screenshot of each main page.
 */
describe('the dashboard, end to end', () => {
  let browser: Browser;
  let cp: TestControlPlane;
  let source: TestDatabase;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(SOURCE_SQL);
    await testMariaDb().exec(
      `DROP USER IF EXISTS '${USER}'@'%'; CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}'; GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${USER}'@'%'`,
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
      // The webhook below points at this machine.
      env: { REPLIX_WEBHOOKS_ALLOW_LOCAL: '1' },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    await source?.drop();
    await testMariaDb().exec(`DROP USER IF EXISTS '${USER}'@'%'`);
  });

  it('goes from sign-in to a query, a webhook and the audit log', {
    timeout: 240_000,
  }, async () => {
    const { page, problems, screenshot } = await openDashboardPage(browser);
    const code = await cp.context.issuer!.signLoginLink({ email: 'flow@example.com' });
    await signInWithLink(page, `${cp.url}/sign-in#link=${code}`);
    await screenshot('databases-empty');

    // A connection to MariaDB, tested before it is saved.
    await navigate(page, 'Connections');
    await page.getByRole('link', { name: 'New connection' }).first().click();
    const sourceUrl = new URL(source.url);
    await page.getByLabel('Name', { exact: true }).fill('harness mariadb');
    await page.getByLabel('Host', { exact: true }).fill(sourceUrl.hostname);
    await page.getByLabel('Port', { exact: true }).fill(sourceUrl.port);
    await page.getByLabel('User', { exact: true }).fill(USER);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const testResult = page.getByRole('region', { name: 'Connection test result' });
    await testResult.getByText('Connection succeeded.').waitFor();
    await expect.poll(() => testResult.textContent(), EVENTUALLY).toContain(source.name);
    await screenshot('connection-test');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'harness mariadb' }).waitFor();
    await navigate(page, 'Connections');
    await page.getByRole('row', { name: /harness mariadb/ }).waitFor();
    await screenshot('connections');

    // A database over it, provisioned from its overview until it runs.
    await navigate(page, 'Databases');
    await page.getByRole('link', { name: 'New database' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('shop');
    await page.getByLabel('Source schema', { exact: true }).fill(source.name);
    await screenshot('database-new');
    await page.getByRole('button', { name: 'Create database' }).click();
    await page.getByRole('heading', { level: 1, name: 'shop' }).waitFor();
    const instance = page.getByRole('region', { name: 'Instance' });
    await expect
      .poll(() => instance.textContent(), EVENTUALLY)
      .toContain('Not deployed yet, so there is no URL to query.');
    await page.getByRole('button', { name: 'Provision', exact: true }).click();
    await expect
      .poll(() => instance.textContent(), { timeout: 120_000, interval: 1000 })
      .toMatch(/running/);
    // The database's endpoint, the address it keeps for life.
    await expect
      .poll(() => instance.textContent(), EVENTUALLY)
      .toMatch(/Instance URLhttp:\/\/127\.0\.0\.1:\d+/);
    const instanceUrl = /Instance URL(http:\/\/127\.0\.0\.1:\d+)/.exec(
      (await instance.textContent()) ?? '',
    )?.[1];
    await screenshot('database-overview');
    // Pause and resume keep the address: shown while paused, the same once running again.
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, pause' }).click();
    await expect
      .poll(() => instance.textContent(), { timeout: 60_000, interval: 500 })
      .toMatch(/paused/);
    expect(await instance.textContent()).toContain(`Instance URL${instanceUrl}`);
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await expect
      .poll(() => instance.textContent(), { timeout: 120_000, interval: 1000 })
      .toMatch(/running/);
    expect(await instance.textContent()).toContain(`Instance URL${instanceUrl}`);
    for (const [tab, name] of [
      ['Schema config', 'database-config'],
      ['Builds', 'database-builds'],
      ['Logs', 'database-logs'],
      ['Metrics', 'database-metrics'],
    ] as const) {
      await page
        .getByRole('navigation', { name: 'Database' })
        .getByRole('link', { name: tab })
        .click();
      await page.waitForLoadState('networkidle');
      await screenshot(name);
    }

    // An API key, shown once, then used in the playground.
    await page
      .getByRole('navigation', { name: 'Database' })
      .getByRole('link', { name: 'API keys' })
      .click();
    await page.getByLabel('Key name').fill('browser test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('code.secret').first().textContent())?.trim() ?? '';
    expect(secret).toMatch(/^rxk_[0-9a-f]{16}\./);
    await screenshot('api-keys');
    // A query key by default; an admin key on request, with a warning, marked in the list.
    const keysTable = page.getByRole('table', { name: 'API keys of shop' });
    const keyRow = (name: string) => keysTable.getByRole('row').filter({ hasText: name });
    await expect.poll(() => keyRow('browser test').textContent(), EVENTUALLY).toContain('query');
    const warning = page.getByRole('note').filter({ hasText: 'Never ship an admin key' });
    expect(await warning.count()).toBe(0);
    await page.getByRole('radio', { name: /Admin key/ }).check();
    await expect.poll(() => warning.count(), EVENTUALLY).toBe(1);
    await page.getByLabel('Key name').fill('ops server');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect
      .poll(() => page.getByText('Admin API key “ops server”').count(), EVENTUALLY)
      .toBe(1);
    await expect.poll(() => keyRow('ops server').textContent(), EVENTUALLY).toContain('admin');
    // The form goes back to a query key, so the next key is not an admin key by accident.
    expect(await page.getByRole('radio', { name: /Query key/ }).isChecked()).toBe(true);
    await screenshot('api-keys-admin');

    await page.getByRole('link', { name: 'Query playground' }).first().click();
    // The keys page has an "API key" region too: fill in the playground's field only once there.
    await page.getByRole('heading', { level: 1, name: 'Query playground' }).waitFor();
    await page.getByLabel('API key').fill(secret);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByLabel('Query', { exact: true }).fill('customers { id name } ORDER BY id');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = page.getByRole('region', { name: 'Result' });
    await expect
      .poll(() => result.getByRole('table').last().textContent(), EVENTUALLY)
      .toMatch(/Ada.*Grace/);
    await screenshot('query-playground');

    // A webhook: its signing secret is shown once.
    await page.goto(`${new URL(page.url()).origin}/databases`);
    await page.getByRole('link', { name: 'shop', exact: true }).click();
    await page
      .getByRole('navigation', { name: 'Database' })
      .getByRole('link', { name: 'Webhooks' })
      .click();
    await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/replix-events');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await expect
      .poll(() => page.locator('code.secret').first().textContent(), EVENTUALLY)
      .toMatch(/\S{16,}/);
    // Beside it, the same secret in its Standard Webhooks form.
    expect(await page.locator('code.webhook-standard-secret').textContent()).toMatch(
      /^whsec_[A-Za-z0-9+/]{43}=$/,
    );
    await screenshot('webhooks');

    // The audit log holds what was just done.
    await navigate(page, 'Audit log');
    const events = page.getByRole('table');
    await expect.poll(() => events.textContent(), EVENTUALLY).toMatch(/database\.created/);
    expect(await events.textContent()).toMatch(/connection\.created/);
    await screenshot('audit-log');

    for (const [label, name] of [
      ['Team', 'team'],
      ['Billing', 'billing'],
      ['Settings', 'settings'],
    ] as const) {
      await navigate(page, label);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      await screenshot(name);
    }
    expect(problems).toEqual([]);
  });

  it('fits a phone-sized screen and shows service admins the admin page', async () => {
    const { page, problems, screenshot } = await openDashboardPage(browser, {
      width: 390,
      height: 844,
    });
    const code = await cp.context.issuer!.signLoginLink({ email: 'ops@example.com', admin: true });
    await signInWithLink(page, `${cp.url}/sign-in#link=${code}`);
    // Evaluated in the page (a string: this file is type-checked without the DOM library).
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBe(0);
    await screenshot('databases-phone');
    await navigate(page, 'Admin');
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await expect
      .poll(() => page.getByRole('table').first().textContent(), EVENTUALLY)
      .toContain('flow@example.com');
    await screenshot('admin-customers');
    expect(problems).toEqual([]);
  });
});
