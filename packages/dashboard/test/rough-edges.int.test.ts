import { randomUUID } from 'node:crypto';
import type { TestDatabase } from '@replix/testkit';
import { testMariaDb } from '@replix/testkit/vitest';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startTestControlPlane,
  type TestControlPlane,
} from '../../control-plane/test/control-plane-harness.ts';
import {
  accountOf,
  insertConnection,
  insertDatabase,
  sourceFromUrl,
} from '../../control-plane/test/lifecycle-fixtures.ts';
import {
  goal,
  liveInstances,
  statusReached,
} from '../../control-plane/test/reconciler-fixtures.ts';
import { EVENTUALLY, launchChromium, openDashboardPage } from './browser.ts';

const EMAIL = 'edges@example.com';
/** The dashboard's one date/time format: local time, ISO-like. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/**
 * The visible text of every <time> in the page's main part (or the table given), once there is
 * at least one. Log lines are the exception: they show the time of day only.
 */
async function timesOn(where: Page | Locator): Promise<string[]> {
  const times =
    'locator' in where && 'goto' in where ? where.locator('main time') : where.locator('time');
  await times.first().waitFor();
  return times.allTextContents();
}

/** The element's computed background colour (this file is type-checked without the DOM library). */
function backgroundOf(locator: Locator): Promise<string> {
  return locator.evaluate(
    (element) =>
      (
        globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
      ).getComputedStyle(element).backgroundColor,
  );
}

async function openTab(page: Page, databaseId: string, tab: string): Promise<void> {
  await page.goto(`${new URL(page.url()).origin}/databases/${databaseId}`);
  await page.getByRole('navigation', { name: 'Database' }).getByRole('link', { name: tab }).click();
}

/**
 * The dashboard's rough edges of issue 15, each in the browser: the terms page and the date the
 * terms were accepted; one date/time format across pages; the playground's result in view
 * after Run; disabled primary buttons that look disabled; sub-second build durations; metrics
 * charts from the control plane's history; the audit log's actor column and key names.
 */
describe('dashboard rough edges', () => {
  let browser: Browser;
  let cp: TestControlPlane;
  let source: TestDatabase;

  beforeAll(async () => {
    source = await testMariaDb().createDatabase(
      "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL); INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace')",
    );
    cp = await startTestControlPlane('pglite', {
      roles: ['api', 'reconciler', 'builder', 'health-monitor'],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await cp?.close();
    await source?.drop();
  });

  it('smooths the edges a new user meets', { timeout: 240_000 }, async () => {
    // A short window: below the editor is below the fold.
    const { page, problems, screenshot } = await openDashboardPage(browser, { height: 700 });
    const code = await cp.context.issuer!.signLoginLink({ email: EMAIL });
    await page.goto(`${cp.url}/sign-in#link=${code}`);

    // The terms step links to the terms, which anyone can read.
    const termsLink = page.getByRole('link', { name: 'terms of service' });
    expect(await termsLink.getAttribute('href')).toBe('/terms');
    const terms = await browser.newPage();
    await terms.goto(`${cp.url}/terms`);
    await terms.getByRole('heading', { level: 1, name: 'Replix terms of service' }).waitFor();
    await terms.close();
    await page.getByLabel(/I accept the Replix terms of service/).check();
    await page.getByRole('button', { name: 'Accept and continue' }).click();
    await page.getByRole('heading', { level: 1, name: 'Databases' }).waitFor();

    // A database that runs, with a key made through the API as this user.
    const token = await cp.token(EMAIL);
    const owner = { accountId: await accountOf(cp, EMAIL) };
    const connectionId = await insertConnection(cp, owner, sourceFromUrl(source.url));
    const { id: databaseId } = await insertDatabase(cp, owner, {
      name: 'shop',
      connectionId,
      sourceSchema: source.name,
      status: 'building',
      goal: goal('provision', 'draft'),
    });
    await statusReached(cp.context.db, databaseId, 'running');
    const key = await cp.request('POST', `/v1/databases/${databaseId}/api-keys`, {
      token,
      body: { name: 'web app' },
    });
    expect(key.status).toBe(201);
    const [instance] = await liveInstances(cp.context.db, databaseId);

    // Readings the control plane kept an hour ago, before any page was open.
    for (const [hoursAgo, queriesOk] of [
      [2, 0],
      [1, 3600],
    ] as const) {
      await cp.context.db
        .insertInto('instance_metrics_samples')
        .values({
          database_id: databaseId,
          instance_id: instance!.id,
          sampled_at: new Date(Date.now() - hoursAgo * 3600_000),
          queries_ok: queriesOk,
          queries_err: 0,
          snapshot_bytes: 1024,
          snapshot_age_seconds: 1,
          swap_count: 1,
          table_rows: JSON.stringify({ customers: 2, archived_orders: 77 }),
          query_duration_sum: 1,
          query_duration_count: queriesOk,
        })
        .execute();
    }
    // An older build that took 0.4 s.
    const finishedAt = new Date(Date.now() - 3600_000);
    await cp.context.db
      .insertInto('builds')
      .values({
        id: randomUUID(),
        database_id: databaseId,
        account_id: owner.accountId,
        region: 'eu-west-1',
        status: 'succeeded',
        started_at: new Date(finishedAt.getTime() - 400),
        finished_at: finishedAt,
        duration_seconds: 0,
        created_at: new Date(finishedAt.getTime() - 500),
      })
      .execute();

    // Settings: when the terms were accepted, and which version.
    await page.goto(`${cp.url}/settings`);
    const accepted = page.getByRole('definition').filter({ hasText: 'version' });
    await expect
      .poll(() => accepted.textContent(), EVENTUALLY)
      .toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \(version \S+, read the terms\)$/);

    // One date/time format on every page that shows times.
    await page.goto(`${cp.url}/databases`);
    await page.getByRole('link', { name: 'shop', exact: true }).waitFor();
    for (const text of await timesOn(page)) expect(text).toMatch(DATE_TIME);
    await page.goto(`${cp.url}/connections`);
    for (const text of await timesOn(page)) expect(text).toMatch(DATE_TIME);

    // Builds: a build under a second says so.
    await openTab(page, databaseId, 'Builds');
    const builds = page.getByRole('table', { name: 'Builds of shop, newest first' });
    await expect.poll(() => builds.getByRole('row').count(), EVENTUALLY).toBe(3);
    expect(await builds.textContent()).toContain('0.4 s');
    for (const text of await timesOn(builds)) expect(text).toMatch(DATE_TIME);
    await screenshot('edges-builds');

    // Metrics: the charts start from the kept history (a table only it has), not the page's
    // first reading.
    await openTab(page, databaseId, 'Metrics');
    const rows = page.getByRole('region', { name: 'Rows' });
    await expect.poll(() => rows.textContent(), EVENTUALLY).toContain('archived_orders 77');
    await expect
      .poll(() => page.getByRole('region', { name: 'Query rate' }).textContent(), EVENTUALLY)
      .toMatch(/Latest: \d+\.\d+ queries per second/);
    expect(await page.getByText('The last 24 hours').count()).toBe(1);
    await screenshot('edges-metrics');

    // Audit log: who did it, and the key by name.
    await page.goto(`${cp.url}/audit`);
    const events = page.getByRole('table', { name: 'Audit events, newest first' });
    const created = events.getByRole('row').filter({ hasText: 'api_key.created' });
    await expect.poll(() => created.textContent(), EVENTUALLY).toContain(EMAIL);
    expect(await created.textContent()).toContain('“web app”');
    const provisioned = events.getByRole('row').filter({ hasText: 'database.provisioned' });
    expect(await provisioned.textContent()).toContain('system');
    expect(await events.getByRole('columnheader', { name: 'Actor' }).count()).toBe(1);
    for (const text of await timesOn(page)) expect(text).toMatch(DATE_TIME);
    await screenshot('edges-audit-log');

    // Playground: a disabled Run does not look like the action to take.
    await page.goto(`${cp.url}/query?database=${databaseId}`);
    const run = page.getByRole('button', { name: 'Run', exact: true });
    await run.waitFor();
    expect(await run.isDisabled()).toBe(true);
    expect(await backgroundOf(run)).toBe('rgb(236, 238, 242)');
    // After Run, the result is in view without scrolling by hand.
    await page.getByLabel('API key').fill(key.body.key);
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByLabel('Query', { exact: true }).fill('customers { id name } ORDER BY id');
    expect(await run.isDisabled()).toBe(false);
    expect(await backgroundOf(run)).toBe('rgb(41, 82, 204)');
    const result = page.getByRole('region', { name: 'Result' });
    const resultBox = async () => {
      const box = await result.boundingBox();
      return box ? { top: box.y, bottom: box.y + box.height } : undefined;
    };
    const before = await resultBox();
    expect(before!.top).toBeGreaterThan(700);
    await run.click();
    await expect
      .poll(() => result.getByRole('table').last().textContent(), EVENTUALLY)
      .toMatch(/Ada.*Grace/);
    await expect.poll(async () => (await resultBox())!.top, EVENTUALLY).toBeLessThan(700);
    expect((await resultBox())!.bottom).toBeGreaterThan(0);
    await screenshot('edges-playground');
    expect(problems).toEqual([]);
  });
});
