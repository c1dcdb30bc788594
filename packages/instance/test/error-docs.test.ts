import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { INSTANCE_ERRORS } from '../src/errors.ts';

describe('the instance error reference', () => {
  it('documents exactly the codes of the error catalogue, with their statuses', () => {
    const doc = readFileSync(new URL('../../../docs/instance-api.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Errors'));
    const documented = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map(
      ([, status, code]) => [code, Number(status)],
    );
    const catalogue = Object.entries(INSTANCE_ERRORS).map(([code, { status }]) => [code, status]);
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(catalogue));
  });
});
