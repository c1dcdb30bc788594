import { describe, expect, it } from 'vitest';
import {
  bannerField,
  browserWithReplix,
  EVENTUALLY,
  openDashboardPage,
  signInWithLink,
} from './browser.ts';

/**
 * What a newcomer does after `npm ci && npm start`: open the printed login link, find the demo
 * database running, and query it from the playground with the printed API key.
 */
describe('a newcomer on the dashboard after npm start', () => {
  const session = browserWithReplix();

  it('signs in with the printed link and queries the demo instance', {
    timeout: 180_000,
  }, async () => {
    const started = Date.now();
    const running = await session.start();
    const { page, problems, screenshot } = await openDashboardPage(session.browser());

    await signInWithLink(page, bannerField(running.banner, 'sign in'));
    const demoRow = page.getByRole('row', { name: /demo/ });
    await expect.poll(() => demoRow.textContent(), EVENTUALLY).toMatch(/running/);
    await screenshot('newcomer-databases');

    await demoRow.getByRole('link', { name: 'demo', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'demo' }).waitFor();
    await page.getByRole('link', { name: 'Query playground' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Query playground' }).waitFor();
    await page.getByLabel('API key').fill(bannerField(running.banner, 'API key'));
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByLabel('Query', { exact: true }).fill('customers (id = 1) { id name }');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = page.getByRole('region', { name: 'Result' });
    await expect
      .poll(() => result.getByRole('table').first().textContent(), EVENTUALLY)
      .toMatch(/\b1\b/);
    const seconds = (Date.now() - started) / 1000;
    await screenshot('newcomer-query-playground');
    process.stdout.write(
      `newcomer: first query result in the dashboard ${seconds.toFixed(1)} s after start\n`,
    );
    expect(problems).toEqual([]);
  });
});
