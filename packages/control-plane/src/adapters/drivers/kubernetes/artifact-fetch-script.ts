import { programSource } from './program-source.ts';

/** The instance pod's init container program: `programs/artifact-fetch.ts`. */
export const artifactFetchScript = programSource(
  new URL('./programs/artifact-fetch.ts', import.meta.url),
);
