import { fileURLToPath } from 'node:url';
import type { InstanceKeySet } from '../../adapters/drivers/instance-key-set.ts';
import type { InstanceLaunch } from '../../adapters/drivers/instance-launch.ts';
import { accountPlan } from '../../adapters/store/account-plan.ts';
import { keyScopesOf } from '../../adapters/store/api-key-store.ts';
import { buildArtifactOf } from '../../adapters/store/build-store.ts';
import { connectionById } from '../../adapters/store/connection-store.ts';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import { keysVersionOf } from '../../adapters/store/database-store.ts';
import type { ApiKeyScope } from '../../adapters/store/schema.ts';
import type { ApiContext } from '../../api/context.ts';
import { deployedConfigOf } from '../../domain/database-settings.ts';
import { replicationIdFor } from '../../domain/replication-id.ts';
import { connectionTarget, type SourceSettings } from '../source-access/connection-target.ts';

/**
 * A launch together with the keys version its key ids were read at, and the connection
 * settings its source URL was made from (recorded before a start: `recordReplicationSource`).
 */
export interface PreparedLaunch {
  readonly launch: InstanceLaunch;
  readonly keysVersion: number;
  readonly source: SourceSettings;
}

/**
 * The key ids an instance of the database accepts, by scope: its API keys as created, and the
 * control plane's own key as an admin key (it reloads, pauses and reads health detail).
 */
export async function keyIdsOf(
  context: Pick<ApiContext, 'db'>,
  databaseId: string,
  controlKeyId: string,
): Promise<{ keys: InstanceKeySet; keysVersion: number }> {
  // The version is read first: a key added meanwhile makes it stale, and the key sync fixes it.
  const keysVersion = await keysVersionOf(context.db, databaseId);
  const keys = await keyScopesOf(context.db, databaseId);
  const idsOf = (scope: ApiKeyScope) =>
    keys.filter((key) => key.scope === scope).map((key) => key.key_id);
  return {
    keys: { keyIds: idsOf('query'), adminKeyIds: [controlKeyId, ...idsOf('admin')] },
    keysVersion,
  };
}

/**
 * Everything the driver needs to start `instance` of `database` from `buildId`'s artifact:
 * the source and its secrets (opened here, handed over in the environment only), keys,
 * settings, the account plan's key rate limit and the control plane's tracing.
 */
export async function instanceLaunchFor(
  context: Pick<ApiContext, 'db' | 'secrets' | 'config'>,
  database: DatabaseRow,
  instance: { id: string; control_key_id: string },
  buildId: string,
): Promise<PreparedLaunch> {
  const build = await buildArtifactOf(context.db, buildId);
  if (build?.status !== 'succeeded' || !build.image_uri) {
    throw new LaunchError('The build to deploy has no artifact.');
  }
  const connection = await connectionById(context.db, database.connection_id);
  if (!connection) throw new LaunchError("The database's connection no longer exists.");
  const target = connectionTarget(connection, context.secrets, database.source_schema);
  const { keys, keysVersion } = await keyIdsOf(context, database.id, instance.control_key_id);
  // The plan at launch: a plan change reaches the instance at its next deploy or restart.
  const { limits } = await accountPlan(context.db, database.account_id);
  return {
    keysVersion,
    source: connection,
    launch: {
      instanceId: instance.id,
      databaseId: database.id,
      buildId,
      artifactDir: fileURLToPath(build.image_uri),
      sourceUrl: target.sourceUrl,
      ssh: target.ssh,
      keySecretHex: context.secrets.openBuffer(database.key_secret_enc).toString('hex'),
      keys,
      replicationId: replicationIdFor(database.id),
      replicas: database.replicas,
      settings: deployedConfigOf(database),
      replicationPaused: database.replication_paused,
      rateLimit: limits.keyRateLimit,
      tracing: context.config.tracing,
    },
  };
}

/** A launch that cannot be prepared; its message is fit for the database's last_error. */
export class LaunchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LaunchError';
  }
}
