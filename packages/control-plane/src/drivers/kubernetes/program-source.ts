import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

/**
 * The JavaScript of one of `programs/`: a program a pod runs with `node --input-type=module -e`
 * on an image that has Node and nothing of ours. Each is a TypeScript file, type-checked and
 * linted with the rest; its types are stripped here, once, when the driver loads. A program
 * may import Node's built-ins only (programs.test.ts checks).
 */
export function programSource(file: URL): string {
  const { code } = transformSync(readFileSync(file, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    legalComments: 'none',
  });
  return code.trim();
}
