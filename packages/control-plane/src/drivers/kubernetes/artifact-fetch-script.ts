import { programSource } from './program-source.ts';

/** The instance pod's init container program: `programs/artifact-fetch.ts`. */
export const ARTIFACT_FETCH_SCRIPT = programSource(
  new URL('./programs/artifact-fetch.ts', import.meta.url),
);
