import { type DatabaseServer, startDedicatedServer } from '@replix/testkit';
import mysql from 'mysql2/promise';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import { killInstanceProcesses } from '../../control-plane/test/reconciler-fixtures.ts';
import { EVENTUALLY, launchChromium, openDashboardPage, signInWithLink } from './browser.ts';

const USER = 'rx_browser_nobinlog';
const PASSWORD = 'No-binlog-Pa55';
const DEPLOY_WAIT = { timeout: 150_000, interval: 1000 } as const;

async function databaseTab(page: Page, tab: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Database' }).getByRole('link', { name: tab }).click();
}

/**
 * Issue 15, point 2, in the browser: a database in CDC mode on a MariaDB whose binary log is
 * off fails its first deploy; the overview says why in the dashboard's words, and doing only
 * what it says (Schema config tab, Sync mode poll, Save changes, Overview tab, Reconfigure)
 * ends with the database running.
 */
describe('a failed first deploy in the dashboard', () => {
  let browser: Browser;
  let cp: TestControlPlane;
  let server: DatabaseServer;

  beforeAll(async () => {
    server = await startDedicatedServer('mariadb', { binlog: false });
    const admin = await mysql.createConnection({ uri: server.url, multipleStatements: true });
    try {
      await admin.query(
        `CREATE DATABASE shop;
         CREATE TABLE shop.item (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL);
         INSERT INTO shop.item VALUES (1, 'one');
         CREATE USER '${USER}'@'%' IDENTIFIED BY '${PASSWORD}';
         GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'%';`,
      );
    } finally {
      await admin.end();
    }
    cp = await startTestControlPlane('pglite', { roles: ['api', 'reconciler', 'builder'] });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    const dataDir = cp?.dataDir;
    await cp?.close();
    if (dataDir) killInstanceProcesses(dataDir);
    await server?.stop();
  });

  it('follows the error’s own words from failed to running', { timeout: 300_000 }, async () => {
    const { page, problems, screenshot } = await openDashboardPage(browser);
    const email = 'failed-deploy@example.com';
    const code = await cp.context.issuer!.signLoginLink({ email });
    await signInWithLink(page, `${cp.url}/sign-in#link=${code}`);

    // Set up through the API as an older client would have: a database that insists on CDC,
    // and one that took the default.
    const token = await cp.token(email);
    const connection = await cp.request('POST', '/v1/connections', {
      token,
      body: {
        name: 'no binlog',
        host: '127.0.0.1',
        port: server.port,
        user: USER,
        password: PASSWORD,
      },
    });
    expect(connection.status).toBe(201);
    const create = (name: string, extra: Record<string, unknown>) =>
      cp.request('POST', '/v1/databases', {
        token,
        body: { name, connectionId: connection.body.id, sourceSchema: 'shop', ...extra },
      });
    expect((await create('insists', { syncMode: 'cdc' })).status).toBe(201);
    const polled = await create('polled', {});
    expect(polled.status).toBe(201);

    // The default: poll, and the Sync mode field says why.
    await page.goto(`${cp.url}/databases/${polled.body.id}/config`);
    await page
      .getByText('Poll: the source’s binary log (replication) is off, so CDC is not available.')
      .waitFor();
    expect(await page.getByLabel('Sync mode').inputValue()).toBe('poll');
    expect(await page.getByLabel('Sync interval (seconds)').inputValue()).toBe('60');

    // The report's path: provision in CDC mode fails, and the overview says what to do.
    await page.goto(`${cp.url}/databases`);
    await page.getByRole('link', { name: 'insists', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'insists' }).waitFor();
    await page.getByRole('button', { name: 'Provision', exact: true }).click();
    const instance = page.getByRole('region', { name: 'Instance' });
    await expect.poll(() => instance.textContent(), DEPLOY_WAIT).toMatch(/Last error/);
    const panel = (await instance.textContent()) ?? '';
    expect(panel).toContain(
      'Sync mode is CDC (change data capture), but the source’s binary log (replication) is off',
    );
    expect(panel).toContain(
      'On the Schema config tab, set Sync mode to poll and click Save changes',
    );
    expect(panel).toContain('but its deploy failed');
    expect(panel).not.toMatch(/"sync"|\{|at .*\.ts:\d+/);
    const reconfigure = page.getByRole('button', { name: 'Reconfigure', exact: true });
    expect(await reconfigure.isEnabled()).toBe(true);
    await screenshot('failed-deploy-overview');

    // "On the Schema config tab, set Sync mode to poll and click Save changes"
    await databaseTab(page, 'Schema config');
    await page.getByLabel('Sync mode').selectOption('poll');
    // The plan's minimum replaces CDC's 1 s, so saving is not refused.
    expect(await page.getByLabel('Sync interval (seconds)').inputValue()).toBe('60');
    // The overview's poll must not have replaced the config the editor shows.
    expect(await page.getByLabel('Schema config (JSON)').inputValue()).toBe('{}\n');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Saved.' }).count(), EVENTUALLY)
      .toBe(1);

    // "then click Reconfigure on the Overview tab"
    await databaseTab(page, 'Overview');
    await page.getByRole('button', { name: 'Reconfigure', exact: true }).click();
    await expect
      .poll(() => instance.getByRole('status').textContent(), DEPLOY_WAIT)
      .toMatch(/Status running/);
    await screenshot('failed-deploy-repaired');
    expect(await instance.textContent()).not.toContain('Last error');
    expect(problems).toEqual([]);
  });
});
