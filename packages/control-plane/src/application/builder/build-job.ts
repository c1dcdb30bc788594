import { randomBytes, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import process from 'node:process';
import { decodeEnvironment, type Environment } from '@replix/runtime';
import type { Logger } from 'pino';
import { type StaticDecode, Type } from 'typebox';
import {
  type BuildClaim,
  type BuildRow,
  claimBuildById,
} from '../../adapters/store/build-queue.ts';
import { buildById, buildErrorOf } from '../../adapters/store/build-store.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import { openStore } from '../../adapters/store/open-store.ts';
import { SecretBox } from '../../adapters/store/secret-box.ts';
import type { BuildJobConfig } from '../../config.ts';
import { BUILD_RATES, type BuildComputeType } from '../../domain/build-rates.ts';
import { withSourceConnector } from '../source-access/connection-target.ts';
import { introspectSource } from './introspect-source.ts';
import type { SourceIntrospector } from './run-build.ts';
import { type ClaimedBuildResult, runClaimedBuild } from './run-claimed-build.ts';

const COMPUTE_TYPES = Object.keys(BUILD_RATES) as BuildComputeType[];

/** What `replix build-job` reads beside the control plane's variables (docs/cli.md). */
export const BUILD_JOB_VARIABLES = Type.Object({
  REPLIX_BUILD_ID: Type.String({ minLength: 1, description: 'the build to run' }),
  REPLIX_BUILD_ATTEMPT: Type.Optional(
    Type.Integer({
      minimum: 1,
      problem: 'must be a positive integer',
      echo: true,
      description: 'the attempt a builder claimed and hands to this job',
    }),
  ),
  REPLIX_BUILD_COMPUTE_TYPE: Type.Enum(COMPUTE_TYPES, {
    default: 'process.small',
    problem: `must be one of ${COMPUTE_TYPES.join(', ')}`,
    echo: true,
    description: 'the tier the build is billed at',
  }),
  REPLIX_BUILD_SOURCE_URL: Type.Optional(
    Type.String({
      minLength: 1,
      description: "this build's source URL, password included: then no REPLIX_SECRET_KEY",
    }),
  ),
  REPLIX_BUILD_SSH_PRIVATE_KEY: Type.Optional(
    Type.String({ description: "with REPLIX_BUILD_SOURCE_URL: the SSH tunnel's private key" }),
  ),
});
export type BuildJobSettings = StaticDecode<typeof BUILD_JOB_VARIABLES>;

/** Decodes `replix build-job`'s own variables; a bad one is a ConfigError naming it. */
export function buildJobSettings(env: Environment = process.env): BuildJobSettings {
  return decodeEnvironment(BUILD_JOB_VARIABLES, env);
}

/**
 * Reads the source through the build's own credential: the URL as given, and the tunnel of
 * the connection (host, port, user are not secret) with the given key. The stored passwords
 * are not opened.
 */
function credentialIntrospector(settings: BuildJobSettings, url: string): SourceIntrospector {
  return (_database, connection) =>
    withSourceConnector(
      {
        sourceUrl: url,
        ssh:
          connection.ssh && settings.REPLIX_BUILD_SSH_PRIVATE_KEY
            ? { ...connection.ssh, privateKey: settings.REPLIX_BUILD_SSH_PRIVATE_KEY }
            : undefined,
      },
      (connector) => connector.introspect(),
    );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The claim a build job runs under, or why it may not run the build. */
export type BuildJobClaim =
  | { readonly kind: 'claimed'; readonly claim: BuildClaim }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * The claim `replix build-job` runs under. Given the attempt a builder claimed (the Job it
 * launched), it works under that builder's claim, which holds only while that attempt is in
 * progress. Without one, it claims the build itself, only while the build waits in the queue.
 * A build that is unknown, finished, or someone else's is refused.
 */
export async function buildJobClaim(
  db: StoreDb,
  settings: Pick<BuildJobSettings, 'REPLIX_BUILD_ID' | 'REPLIX_BUILD_ATTEMPT'>,
  owner: string,
): Promise<BuildJobClaim> {
  const buildId = settings.REPLIX_BUILD_ID;
  const attempt = settings.REPLIX_BUILD_ATTEMPT;
  const build: BuildRow | undefined = UUID.test(buildId) ? await buildById(db, buildId) : undefined;
  if (!build) return { kind: 'refused', message: `There is no build ${JSON.stringify(buildId)}.` };
  if (build.status === 'succeeded' || build.status === 'failed') {
    return { kind: 'refused', message: `Build ${buildId} has already ${build.status}.` };
  }
  if (attempt !== undefined) {
    if (build.status === 'in_progress' && build.attempts === attempt && build.lease_owner) {
      return { kind: 'claimed', claim: { build, owner: build.lease_owner, attempt } };
    }
    return {
      kind: 'refused',
      message: `Attempt ${attempt} of build ${buildId} is not running (the build is ${build.status}, attempt ${build.attempts}).`,
    };
  }
  const claim = await claimBuildById(db, buildId, owner);
  if (claim) return { kind: 'claimed', claim };
  return {
    kind: 'refused',
    message: `Build ${buildId} is being run by a builder (attempt ${build.attempts}).`,
  };
}

/** How a build job ended: recorded, or refused (`message` says why). */
export type BuildJobOutcome =
  | { readonly kind: 'refused'; readonly message: string }
  | {
      readonly kind: 'ran';
      readonly result: ClaimedBuildResult;
      readonly buildId: string;
      /** The recorded reason of a failed build (fit for users: no secret, host or stack). */
      readonly error: string | null;
    };

/**
 * `replix build-job`: runs exactly one build, the one `REPLIX_BUILD_ID` names, through the
 * builder role's own code (runClaimedBuild), recording its log and outcome in the store.
 * Aborting `stopping` (SIGTERM) gives the build back to the queue.
 */
export async function runBuildJob(
  config: BuildJobConfig,
  settings: BuildJobSettings,
  log: Logger,
  stopping: AbortSignal,
): Promise<BuildJobOutcome> {
  const store = await openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}:build-job`;
    const url = settings.REPLIX_BUILD_SOURCE_URL;
    // With a credential the job holds no key: a box of a random key opens no stored secret,
    // and the credential's introspector never asks it to.
    const key = url === undefined ? config.secretKey : randomBytes(32);
    if (key === undefined) {
      throw new Error('A build job needs REPLIX_BUILD_SOURCE_URL or REPLIX_SECRET_KEY.');
    }
    const found = await buildJobClaim(store.db, settings, owner);
    if (found.kind === 'refused') return found;
    const result = await runClaimedBuild(found.claim, {
      db: store.db,
      log,
      dataDir: config.dataDir,
      secrets: new SecretBox(key),
      introspect: url === undefined ? introspectSource : credentialIntrospector(settings, url),
      computeType: settings.REPLIX_BUILD_COMPUTE_TYPE,
      stopping,
    });
    const recordedError = await buildErrorOf(store.db, found.claim.build.id);
    return {
      kind: 'ran',
      result,
      buildId: found.claim.build.id,
      error: result === 'failed' ? (recordedError ?? null) : null,
    };
  } finally {
    await store.close();
  }
}
