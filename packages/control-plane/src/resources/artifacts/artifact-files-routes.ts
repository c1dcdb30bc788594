import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARTIFACT_FILES } from '@replix/instance';
import type { ApiServer } from '../../api/api-server.ts';
import type { ApiContext } from '../../api/context.ts';
import { artifactTokenMatches } from '../../builder/artifact-token.ts';
import { ApiError } from '../../errors.ts';

/** A file name of an artifact: one path segment, never `.` or `..`. */
const FILE_NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const MAX_ID_CHARS = 128;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The artifact endpoint instance pods fetch their build from (Kubernetes driver, `fetch`
 * delivery; the init container's script is artifact-fetch-script.ts):
 * `GET /v1/internal/artifacts/<buildId>/<file>` with the build's token
 * (builder/artifact-token.ts) as bearer. The token is checked first (401), so nobody without
 * it learns which builds exist (404 after). Only `manifest.json` and the files it lists are
 * served, read from the build's artifact folder; nothing else of the data folder is reachable.
 */
export function registerArtifactFilesRoutes(app: ApiServer, context: ApiContext): void {
  app.get(
    '/internal/artifacts/:buildId/:file',
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const { buildId, file } = request.params as { buildId: string; file: string };
      const header = request.headers.authorization;
      const token = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header)?.[1] : undefined;
      if (
        !token ||
        buildId.length > MAX_ID_CHARS ||
        !artifactTokenMatches(context.config.secretKey, buildId, token)
      ) {
        reply.header('www-authenticate', 'Bearer');
        throw new ApiError('unauthorized', 'A valid artifact token for this build is required.');
      }
      const dir = await artifactDirOf(context, buildId);
      if (dir === null || !FILE_NAME.test(file)) throw notFound();
      const manifestBytes = await readFile(join(dir, ARTIFACT_FILES.manifest)).catch(() => null);
      if (manifestBytes === null) throw notFound();
      if (file !== ARTIFACT_FILES.manifest) {
        const listed = (JSON.parse(manifestBytes.toString('utf8')) as { files?: object }).files;
        if (!listed || !Object.hasOwn(listed, file)) throw notFound();
      }
      const bytes =
        file === ARTIFACT_FILES.manifest ? manifestBytes : await readFile(join(dir, file));
      return reply
        .header('cache-control', 'no-store')
        .type(file.endsWith('.json') ? 'application/json' : 'application/octet-stream')
        .send(bytes);
    },
  );
}

function notFound(): ApiError {
  return new ApiError('not_found', 'No such artifact file.');
}

/** The folder of a succeeded build's artifact, or null. */
async function artifactDirOf(context: ApiContext, buildId: string): Promise<string | null> {
  if (!UUID.test(buildId)) return null;
  const build = await context.db
    .selectFrom('builds')
    .select(['status', 'image_uri'])
    .where('id', '=', buildId)
    .executeTakeFirst();
  if (build?.status !== 'succeeded' || !build.image_uri?.startsWith('file:')) return null;
  return fileURLToPath(build.image_uri);
}
