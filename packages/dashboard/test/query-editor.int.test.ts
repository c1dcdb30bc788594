import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import {
  bannerField,
  browserWithReplix,
  EVENTUALLY,
  openDashboardPage,
  signInWithLink,
} from './browser.ts';

/** The labels of the open completion list, sorted (CodeMirror orders them by match). */
async function completions(page: Page): Promise<string[]> {
  const labels = page.locator('.cm-tooltip-autocomplete .cm-completionLabel');
  return (await labels.allTextContents()).sort();
}

/** The texts of the editor's tokens shown with `className`, in order. */
function tokensOf(editor: Locator, className: string): Promise<string[]> {
  return editor.locator(`.${className}`).allTextContents();
}

/** The text the page has selected (this file is type-checked without the DOM library). */
function selectedText(page: Page): Promise<string> {
  return page.evaluate(() =>
    (globalThis as unknown as { getSelection(): { toString(): string } }).getSelection().toString(),
  );
}

/**
 * The playground's editor on the demo shop of `replix start`: colours from the query lexer,
 * completion of the instance's tables, fields and relations where the cursor is, the parser's
 * errors underlined as you type, and queries still run from it.
 */
describe('the query playground editor', () => {
  const session = browserWithReplix();

  it('highlights, completes from the schema, underlines errors and runs', {
    timeout: 180_000,
  }, async () => {
    const running = await session.start();
    const { page, problems, screenshot } = await openDashboardPage(session.browser());
    await signInWithLink(page, bannerField(running.banner, 'sign in'));
    const demoRow = page.getByRole('row', { name: /demo/ });
    await expect.poll(() => demoRow.textContent(), EVENTUALLY).toMatch(/running/);
    // The one running database is chosen for the user.
    await page.goto(`${new URL(page.url()).origin}/query`);
    await page.getByLabel('API key').fill(bannerField(running.banner, 'API key'));
    await page.getByRole('button', { name: 'Use this key' }).click();
    // The table buttons show that the instance's schema has been read.
    await page.getByRole('button', { name: 'order_items', exact: true }).waitFor();
    const editor = page.getByLabel('Query', { exact: true });

    // Colours come from the lexer's tokens.
    await editor.fill("customers (country = 'IS') { id name } ORDER BY name LIMIT 3 -- three");
    await expect.poll(() => tokensOf(editor, 'rx-keyword')).toEqual(['ORDER', 'BY', 'LIMIT']);
    expect(await tokensOf(editor, 'rx-name')).toEqual([
      'customers',
      'country',
      'id',
      'name',
      'name',
    ]);
    expect(await tokensOf(editor, 'rx-string')).toEqual(["'IS'"]);
    expect(await tokensOf(editor, 'rx-number')).toEqual(['3']);
    expect(await tokensOf(editor, 'rx-operator')).toEqual(['=']);
    expect(await tokensOf(editor, 'rx-comment')).toEqual(['-- three']);

    // Ctrl+Enter runs the query from the editor.
    await editor.press('Control+Enter');
    const result = page.getByRole('region', { name: 'Result' });
    await expect.poll(() => result.getByRole('row').count(), EVENTUALLY).toBe(4);
    expect(await result.getByRole('columnheader').allTextContents()).toEqual(['id', 'name']);
    await screenshot('query-editor-highlighted');

    // Tables at the start.
    await editor.fill('');
    await editor.pressSequentially('or');
    await expect.poll(() => completions(page)).toEqual(['order_items', 'orders']);
    await editor.pressSequentially('ders');
    // order_items still matches, loosely: the best match comes first.
    const selected = page.locator(
      '.cm-tooltip-autocomplete [aria-selected="true"] .cm-completionLabel',
    );
    await expect.poll(() => selected.textContent()).toBe('orders');
    // Clicked: Enter right after the list opens is kept for a new line (interactionDelay).
    await selected.click();
    expect(await editor.textContent()).toBe('orders');

    // Inside the braces: the table's fields, relations and the aggregates (Ctrl+Space asks with
    // nothing typed).
    await editor.pressSequentially(' { ');
    await page.keyboard.press('Control+Space');
    await expect
      .poll(() => completions(page))
      .toEqual([
        'AVG',
        'COUNT',
        'COUNT(*)',
        'MAX',
        'MIN',
        'SUM',
        'customer',
        'customer_id',
        'id',
        'note',
        'order_items',
        'placed_on',
        'status',
      ]);
    await page.keyboard.press('Escape');
    // A relation's braces hold the related table's fields.
    await editor.pressSequentially('id customer { co');
    await expect.poll(() => completions(page)).toEqual(['COUNT', 'COUNT(*)', 'country']);
    await page.getByRole('option', { name: /country/ }).click();
    await editor.pressSequentially(' } ');
    await page.keyboard.press('Control+Space');
    await expect.poll(() => completions(page)).toContain('placed_on');
    await page.keyboard.press('Escape');
    // In a filter, a relation's path leads to its table's fields.
    await editor.pressSequentially('order_items (product.');
    await expect
      .poll(() => completions(page))
      .toEqual(['category', 'id', 'in_stock', 'name', 'order_items', 'price']);
    await screenshot('query-editor-completion');
    await page.keyboard.press('Escape');
    expect(await editor.textContent()).toBe(
      'orders { id customer { country } order_items (product.',
    );
    // After HAVING: the grouped selection's keys, its fields and its aggregates'.
    await editor.fill('orders { status COUNT(*) MAX(placed_on) } HAVING ');
    await page.keyboard.press('Control+Space');
    await expect.poll(() => completions(page)).toEqual(['count', 'max_placed_on', 'status']);
    await page.getByRole('option', { name: /max_placed_on/ }).click();
    expect(await editor.textContent()).toBe(
      'orders { status COUNT(*) MAX(placed_on) } HAVING max_placed_on',
    );

    // The parser's error, underlined where it points, with its message; gone once fixed.
    await editor.fill('customers { id name } LIMT 5');
    const underline = editor.locator('.cm-lintRange-error');
    await expect.poll(() => underline.allTextContents(), EVENTUALLY).toEqual(['LIMT']);
    await underline.hover();
    await expect
      .poll(() => page.locator('.cm-tooltip-lint').textContent())
      .toContain(
        'Syntax error: Expected HAVING, ORDER BY, LIMIT, OFFSET, AFTER or end of query, found name "LIMT".',
      );
    await screenshot('query-editor-diagnostic');
    // The instance says the same; its position is shown in the editor.
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await result.getByText('parse_error', { exact: true }).waitFor();
    expect(await result.getByRole('alert').textContent()).toContain('at line 1, column 23');
    await page.getByRole('button', { name: 'Show the position in the editor' }).click();
    await expect.poll(() => selectedText(page)).toBe('L');
    await editor.fill('customers { id name } LIMIT 5');
    await expect.poll(() => underline.count(), EVENTUALLY).toBe(0);
    // A missing brace is a point at the end of the query.
    await editor.fill('customers { id name');
    await expect.poll(() => editor.locator('.cm-lintPoint-error').count(), EVENTUALLY).toBe(1);
    expect(problems).toEqual([]);
  });
});
