import { fileURLToPath } from 'node:url';
import { buildArtifactOf } from '../../adapters/store/build-store.ts';
import { artifactFile } from '../../application/builder/artifact-files.ts';
import { ApiError } from '../../domain/errors.ts';
import type { ApiServer } from '../api-server.ts';
import type { ApiContext } from '../context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `GET /internal/artifacts/<buildId>/<file>`: what instance pods of the Kubernetes driver
 * fetch their build from, with the build's token as bearer (builder/artifact-files.ts). Not
 * in the OpenAPI document: it is for the cluster's pods, not for users.
 */
export function registerArtifactFilesRoutes(app: ApiServer, context: ApiContext): void {
  const source = {
    secretKey: context.config.secretKey,
    artifactDirOf: (buildId: string) => artifactDirOf(context, buildId),
  };
  app.get(
    '/internal/artifacts/:buildId/:file',
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const { buildId, file } = request.params as { buildId: string; file: string };
      const answer = await artifactFile(source, buildId, file, request.headers.authorization);
      if (answer.kind === 'unauthorized') {
        reply.header('www-authenticate', 'Bearer');
        throw new ApiError('unauthorized', 'A valid artifact token for this build is required.');
      }
      if (answer.kind === 'not_found') throw new ApiError('not_found', 'No such artifact file.');
      return reply.header('cache-control', 'no-store').type(answer.contentType).send(answer.bytes);
    },
  );
}

/** The folder of a succeeded build's artifact, or null. */
async function artifactDirOf(context: ApiContext, buildId: string): Promise<string | null> {
  if (!UUID.test(buildId)) return null;
  const build = await buildArtifactOf(context.db, buildId);
  if (build?.status !== 'succeeded' || !build.image_uri?.startsWith('file:')) return null;
  return fileURLToPath(build.image_uri);
}
