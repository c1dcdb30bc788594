import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import manifest from '../package.json' with { type: 'json' };

const src = new URL('../src/', import.meta.url);

describe('@replix/sdk', () => {
  it('imports nothing at run time but its own modules: it runs in browsers as in Node', () => {
    const outside = readdirSync(src).flatMap((file) =>
      [
        ...readFileSync(new URL(file, src), 'utf8').matchAll(
          /^\s*(?:import|export)\b[^;]*?from '([^']+)'/gm,
        ),
      ]
        .map((match) => match[1]!)
        .filter((specifier) => !specifier.startsWith('./'))
        .map((specifier) => `${file}: ${specifier}`),
    );
    expect(outside).toEqual([]);
    expect(manifest).not.toHaveProperty('dependencies');
  });
});
