import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

/**
 * The JavaScript of one of `programs/`: a program a pod runs with `node --input-type=module -e`
 * on an image that has Node and nothing of ours. Each is a TypeScript file, type-checked and
 * linted with the rest; its types are stripped on first use (not on import: the configuration
 * imports the manifests' names, and every process reads the configuration). A program may
 * import Node's built-ins only (kubernetes-programs.test.ts checks).
 */
export function programSource(file: URL): () => string {
  let code: string | undefined;
  return () => {
    code ??= transformSync(readFileSync(file, 'utf8'), {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      legalComments: 'none',
    }).code.trim();
    return code;
  };
}
