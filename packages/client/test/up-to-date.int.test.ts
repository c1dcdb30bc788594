import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiJsonText, servedOpenApiDocument } from '../../../tools/openapi-document.ts';

describe('the committed client', () => {
  it('was generated from the OpenAPI document the control plane serves now', async () => {
    const committed = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
    const served = openApiJsonText(await servedOpenApiDocument());
    // Not toBe: a 400 kB string diff is unreadable; the message says what to do instead.
    expect(
      committed === served,
      'packages/client/openapi.json is stale: run `npm run generate:client` and commit the result',
    ).toBe(true);
  });
});
