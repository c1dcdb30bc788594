import { describe, expect, it } from 'vitest';
import {
  bannerField,
  browserWithReplix,
  EVENTUALLY,
  openDashboardPage,
  signInWithLink,
} from './browser.ts';

/** A policy's directives by name. */
function directives(policy: string): Record<string, string[]> {
  return Object.fromEntries(
    policy.split(';').map((directive) => {
      const [name, ...sources] = directive.trim().split(/\s+/);
      return [name as string, sources];
    }),
  );
}

/**
 * The dashboard under its Content-Security-Policy, in Chromium against `replix start`: the
 * headers are sent, every page (the playground's editor included) loads and works without a
 * refusal, and a script injected into the page is refused.
 */
describe("the dashboard's security headers", () => {
  const session = browserWithReplix();

  it('sends a strict policy, works within it and refuses injected scripts', {
    timeout: 180_000,
  }, async () => {
    const running = await session.start();
    const { page, problems, cspViolations } = await openDashboardPage(session.browser());
    const link = bannerField(running.banner, 'sign in');
    const origin = new URL(link).origin;

    const first = await page.goto(`${origin}/`);
    const headers = first?.headers() ?? {};
    const policy = directives(headers['content-security-policy'] ?? '');
    expect(policy).toMatchObject({
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'object-src': ["'none'"],
      'base-uri': ["'self'"],
      'frame-ancestors': ["'none'"],
      // The process driver's query endpoints: ports of this machine's loopback.
      'connect-src': ["'self'", 'http://127.0.0.1:*'],
    });
    expect(policy['style-src']).toEqual(["'self'", expect.stringMatching(/^'nonce-[\w+/=]+'$/)]);
    const text = headers['content-security-policy'] ?? '';
    expect(text).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(text.replace('http://127.0.0.1:*', '')).not.toContain('*');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['referrer-policy']).toBe('no-referrer');

    // The nonce changes with every answer.
    const again = await page.request.get(`${origin}/`, { headers: { accept: 'text/html' } });
    expect(directives(again.headers()['content-security-policy'] ?? '')['style-src']).not.toEqual(
      policy['style-src'],
    );
    // The API's JSON gets the headers that are not a policy.
    const json = await page.request.get(`${origin}/v1/openapi.json`);
    expect(json.headers()['x-content-type-options']).toBe('nosniff');
    expect(json.headers()['content-security-policy']).toBeUndefined();

    // Pages load and work: sign-in, the databases, the database, the playground and its editor.
    await signInWithLink(page, link);
    const demoRow = page.getByRole('row', { name: /demo/ });
    await expect.poll(() => demoRow.textContent(), EVENTUALLY).toMatch(/running/);
    await demoRow.getByRole('link', { name: 'demo', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'demo' }).waitFor();
    const pages = [
      ['Connections', '/connections'],
      ['Audit log', '/audit'],
      ['Team', '/team'],
      ['Billing', '/billing'],
      ['Settings', '/settings'],
      ['Databases', '/databases'],
    ];
    for (const [label, path] of pages) {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: label })
        .click();
      await page.waitForURL(`${origin}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
    }
    await page.goto(`${origin}/query`);
    await page.getByLabel('API key').fill(bannerField(running.banner, 'API key'));
    await page.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('button', { name: 'order_items', exact: true }).waitFor();
    const editor = page.getByLabel('Query', { exact: true });
    await editor.fill('customers { id name } LIMIT 2');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => page.getByRole('table').count(), EVENTUALLY).toBeGreaterThan(0);
    // CodeMirror's own styles are applied (its injected rules carry the page's nonce).
    const editorPosition = await page
      .locator('.cm-editor')
      .first()
      .evaluate(
        (element) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { position: string } }
          ).getComputedStyle(element).position,
      );
    expect(editorPosition).toBe('relative');
    expect(cspViolations).toEqual([]);
    expect(problems).toEqual([]);

    // A script injected into the page does not run.
    const ran = await page.evaluate(() => {
      const page = globalThis as unknown as {
        document: {
          createElement(tag: string): { textContent: string };
          head: { append(node: unknown): void };
        };
        injected?: boolean;
      };
      const script = page.document.createElement('script');
      script.textContent = 'globalThis.injected = true';
      page.document.head.append(script);
      return page.injected === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => cspViolations).toContainEqual(expect.stringMatching(/^script-src/));
  });
});
