import { fileURLToPath } from 'node:url';

/**
 * The entry point the builder bundles into `instance.mjs`. It is a path into this package's
 * source, so it is only meaningful where the source is (the control plane), never in a bundle.
 */
export function artifactEntryPoint(): string {
  return fileURLToPath(new URL('./artifact-main.ts', import.meta.url));
}
