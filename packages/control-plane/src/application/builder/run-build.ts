import { pathToFileURL } from 'node:url';
import {
  compileSchema,
  parseSchemaConfig,
  type SchemaConfig,
  type SourceSchema,
} from '@replix/engine';
import { inSpan } from '@replix/runtime/tracing';
import type { Kysely, Selectable } from 'kysely';
import type { BuildRow } from '../../adapters/store/build-queue.ts';
import { connectionById } from '../../adapters/store/connection-store.ts';
import { databaseById } from '../../adapters/store/database-store.ts';
import { appendLogLine } from '../../adapters/store/log-lines.ts';
import type { ConnectionTable, DatabaseTable, Store } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { databaseConfigHash } from './config-hash.ts';
import { instanceBundle } from './instance-bundle.ts';
import { writeArtifact } from './write-artifact.ts';

/** Reads the source's tables for a database (connections/connection-target.ts in production). */
export type SourceIntrospector = (
  database: Selectable<DatabaseTable>,
  connection: Selectable<ConnectionTable>,
  secrets: SecretBox,
) => Promise<SourceSchema>;

/** A build failure whose message is fit for the build log and the API: no stack, no host. */
export class BuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BuildError';
  }
}

export interface BuildEnvironment {
  readonly db: Kysely<Store>;
  readonly dataDir: string;
  /** Where bundled instance programs are kept (REPLIX_BUNDLE_CACHE_DIR); undefined: the data folder's. */
  readonly bundleCacheDir?: string | undefined;
  readonly secrets: SecretBox;
  readonly introspect: SourceIntrospector;
  /** Aborted when the builder stops or loses the build's lease; checked between steps. */
  readonly signal: AbortSignal;
}

export interface BuiltArtifact {
  readonly imageUri: string;
  readonly buildHash: string;
  readonly configHash: string;
}

/** The database's schema config with its sync settings merged in, validated. */
export function buildSchemaConfig(database: Selectable<DatabaseTable>): SchemaConfig {
  const given = database.schema_config as { sync?: Record<string, unknown> };
  return parseSchemaConfig({
    ...given,
    sync: {
      ...given.sync,
      mode: database.sync_mode,
      interval: database.sync_interval,
      safety_net: database.safety_net,
    },
  });
}

/**
 * Runs one build: introspects the database's source, validates and compiles the schema config
 * against it, bundles the instance program (cached per engine) and writes the artifact. Writes
 * its progress to the build log. Throws BuildError for what the user can fix.
 */
export async function runBuild(build: BuildRow, env: BuildEnvironment): Promise<BuiltArtifact> {
  const log = (message: string) => appendLogLine(env.db, build.id, message);
  const database = await databaseById(env.db, build.database_id);
  if (!database || database.deleted_at) throw new BuildError('The database was deleted.');
  const connection = await connectionById(env.db, database.connection_id);
  if (!connection || connection.deleted_at) {
    throw new BuildError("The database's connection was deleted.");
  }
  const configHash = databaseConfigHash(database);
  // Validate what the user wrote before connecting anywhere: a bad key fails fast.
  const schemaConfig = buildSchemaConfig(database);
  env.signal.throwIfAborted();

  await log(`Introspecting source schema "${database.source_schema}"…`);
  // Each step is a child span of the build's (run-claimed-build.ts) when tracing is on.
  const sourceSchema = await inSpan('build introspect', {}, async (span) => {
    const found = await env.introspect(database, connection, env.secrets);
    span?.setAttribute('replix.build.tables', found.tables.length);
    return found;
  });
  await log(`Found ${sourceSchema.tables.length} tables in the source`);
  env.signal.throwIfAborted();

  const schema = await inSpan('build compile', {}, async () =>
    compileSchema(sourceSchema, schemaConfig),
  );
  await log(`Compiled ${schema.tables.length} tables`);
  env.signal.throwIfAborted();

  const bundle = await inSpan('build bundle', {}, async (span) => {
    const bundled = await instanceBundle(env.dataDir, env.bundleCacheDir);
    span?.setAttribute('replix.build.bundle_cache_hit', bundled.cacheHit);
    return bundled;
  });
  await log(`Bundled instance program (${bundle.cacheHit ? 'cache hit' : 'bundled anew'})`);
  env.signal.throwIfAborted();

  const artifact = await inSpan('build write artifact', {}, async () =>
    writeArtifact({
      dataDir: env.dataDir,
      buildId: build.id,
      databaseId: database.id,
      programPath: bundle.path,
      schemaConfig,
      sourceSchema,
      schema,
    }),
  );
  await log(`Artifact ${artifact.manifest.buildHash} written`);
  return {
    imageUri: pathToFileURL(artifact.dir).href,
    buildHash: artifact.manifest.buildHash,
    configHash,
  };
}
