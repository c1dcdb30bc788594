import { join } from 'node:path';

/** Every build's artifact lives in its own folder under the data folder. */
export function artifactsRootFor(dataDir: string): string {
  return join(dataDir, 'artifacts');
}

/** The artifact folder of one build: `<dataDir>/artifacts/<buildId>/` (docs/control-plane/builds.md). */
export function artifactDirFor(dataDir: string, buildId: string): string {
  return join(artifactsRootFor(dataDir), buildId);
}
