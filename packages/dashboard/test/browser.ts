import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { type StartedReplix, startEnvironment, startReplix } from '../../cli/test/replix-start.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where the screenshots of each main page go (git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, 'test-output/screenshots');

/**
 * Debian's Chromium, headless. Never a downloaded browser: `apt-get install chromium`
 * (`.ci/run` does) or CHROMIUM_PATH.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/**
 * For `expect.poll` on the page: the UI follows polls and background work (a new key reaches
 * its instance within a second), so wait up to 15 s, not the 1-s default.
 */
export const EVENTUALLY = { timeout: 15_000, interval: 200 } as const;

export interface DashboardPage {
  readonly page: Page;
  /** Uncaught errors and console errors the app produced (a test expects none). */
  readonly problems: string[];
  /**
   * What a page's Content-Security-Policy refused, as `<directive> <blocked URL>`; the browser's
   * own "Refused to …" line for each is a console error, so `problems` has them too.
   */
  readonly cspViolations: string[];
  /** Saves a full-page screenshot as `<name>.png` in SCREENSHOT_DIR. */
  screenshot(name: string): Promise<void>;
}

/** A fresh browser context (no session) with a page that records the app's errors. */
export async function openDashboardPage(
  browser: Browser,
  options: { width?: number; height?: number } = {},
): Promise<DashboardPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  // Before any of the page's scripts: the browser tells each refusal as this event.
  const CSP_VIOLATION = 'CSP violation:';
  await context.addInitScript((prefix) => {
    const page = globalThis as unknown as {
      document: { addEventListener(type: string, listener: (event: never) => void): void };
      console: { info(text: string): void };
    };
    page.document.addEventListener(
      'securitypolicyviolation',
      (event: { effectiveDirective: string; blockedURI: string }) =>
        page.console.info(`${prefix} ${event.effectiveDirective} ${event.blockedURI}`),
    );
  }, CSP_VIOLATION);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const cspViolations: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (text.startsWith(CSP_VIOLATION)) cspViolations.push(text.slice(CSP_VIOLATION.length + 1));
    // Failed requests the app handles (a 4xx it shows) are logged by the browser as errors too.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    page,
    problems,
    cspViolations,
    screenshot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
  };
}

/**
 * Opens a one-time login link and passes the first-sign-in terms step, which `replix start`'s
 * demo account does not have (its start accepted them).
 */
export async function signInWithLink(page: Page, link: string): Promise<void> {
  await page.goto(link);
  const terms = page.getByLabel(/I accept the Replix terms of service/);
  const databases = page.getByRole('heading', { level: 1, name: 'Databases' });
  await terms.or(databases).first().waitFor();
  if (await terms.isVisible()) {
    await terms.check();
    await page.getByRole('button', { name: 'Accept and continue' }).click();
  }
  await databases.waitFor();
}

/** A value `replix start` prints in its banner after a label (`sign in`, `API key`). */
export function bannerField(banner: string, label: string): string {
  const line = banner.split('\n').find((l) => l.trimStart().startsWith(label));
  const value = line?.trim().slice(label.length).trim().split(/\s+/)[0];
  if (!value) throw new Error(`no "${label}" in the banner:\n${banner}`);
  return value;
}

/**
 * A test file's Chromium (launched before its tests) and the `replix start` its test starts,
 * both stopped after them, the data folder removed.
 */
export function browserWithReplix(): {
  browser(): Browser;
  /** Starts `replix start` on a fresh environment (inside a test, so its time counts there). */
  start(): Promise<StartedReplix>;
} {
  let browser: Browser | undefined;
  let env: NodeJS.ProcessEnv | undefined;
  let running: StartedReplix | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await running?.stop();
    if (env?.REPLIX_DATA_DIR) rmSync(env.REPLIX_DATA_DIR, { recursive: true, force: true });
  });
  return {
    browser: () => browser as Browser,
    async start() {
      env = await startEnvironment();
      running = await startReplix(env);
      return running;
    },
  };
}
