import type { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACT_FILES } from '@replix/instance-protocol';
import { artifactTokenMatches } from '../../domain/artifact-token.ts';

/** A file name of an artifact: one path segment, never `.` or `..`. */
const FILE_NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const MAX_ID_CHARS = 128;

/** What the artifact endpoint answers: a file, or an error (the route wraps it in the envelope). */
export type ArtifactFileAnswer =
  | { readonly kind: 'file'; readonly bytes: Buffer; readonly contentType: string }
  | { readonly kind: 'unauthorized' }
  | { readonly kind: 'not_found' };

export interface ArtifactFileSource {
  readonly secretKey: Buffer;
  /** The folder of a succeeded build's artifact, or null (unknown, failed, not yet built). */
  readonly artifactDirOf: (buildId: string) => Promise<string | null>;
}

/**
 * One file of a build's artifact for an instance pod (Kubernetes driver, `fetch` delivery:
 * artifact-fetch-script.ts), given the `Authorization` header. The build's token
 * (artifact-token.ts) is checked first, so nobody without it learns which builds exist; then
 * only `manifest.json` and the files it lists are served from the build's folder, so no name
 * reaches anything else.
 */
export async function artifactFile(
  source: ArtifactFileSource,
  buildId: string,
  file: string,
  authorization: string | undefined,
): Promise<ArtifactFileAnswer> {
  const token = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] : undefined;
  if (
    !token ||
    buildId.length > MAX_ID_CHARS ||
    !artifactTokenMatches(source.secretKey, buildId, token)
  ) {
    return { kind: 'unauthorized' };
  }
  if (!FILE_NAME.test(file)) return { kind: 'not_found' };
  const dir = await source.artifactDirOf(buildId);
  if (dir === null) return { kind: 'not_found' };
  const manifestBytes = await readFile(join(dir, ARTIFACT_FILES.manifest)).catch(() => null);
  if (manifestBytes === null) return { kind: 'not_found' };
  if (file !== ARTIFACT_FILES.manifest) {
    let listed: unknown;
    try {
      listed = (JSON.parse(manifestBytes.toString('utf8')) as { files?: unknown }).files;
    } catch {
      return { kind: 'not_found' };
    }
    if (typeof listed !== 'object' || listed === null || !Object.hasOwn(listed, file)) {
      return { kind: 'not_found' };
    }
  }
  const bytes =
    file === ARTIFACT_FILES.manifest
      ? manifestBytes
      : await readFile(join(dir, file)).catch(() => null);
  if (bytes === null) return { kind: 'not_found' };
  const contentType = file.endsWith('.json') ? 'application/json' : 'application/octet-stream';
  return { kind: 'file', bytes, contentType };
}
