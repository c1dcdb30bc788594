import process from 'node:process';
import {
  openSshTunnel,
  parseSourceUrl,
  type SshTunnel,
  sourceUrlThroughTunnel,
} from '@replix/sources';
import { type ArtifactFlags, resolveArtifactConfig } from './artifact-config.ts';
import { watchKeysFile } from './http/keys-file-watcher.ts';
import { createLogger, type RunningInstance, startInstance } from './start-instance.ts';

/**
 * The entry point of a build artifact's `instance.mjs` (bundled by the control plane's
 * builder). Keep its signature stable: `replix serve --artifact` of any release calls it.
 */
export interface RunArtifactOptions extends ArtifactFlags {
  /** Called when the instance cannot go on; the caller closes it and exits non-zero. */
  readonly onFatal?: (reason: string) => void;
}

/**
 * Runs the instance program of the build artifact in `artifactDir` on the control plane's
 * launch environment (REPLIX_SOURCE_URL, REPLIX_KEY_SECRET, REPLIX_KEY_IDS, REPLIX_ADMIN_KEY_IDS,
 * REPLIX_KEYS_FILE, REPLIX_REPLICATION_ID, REPLIX_REPLICATION_PAUSED, REPLIX_SYNC_*,
 * REPLIX_SAFETY_NET, REPLIX_MEMORY_CAP_MB, REPLIX_LOG_LEVEL, REPLIX_SSH_*): opens the SSH tunnel when one is
 * configured, starts the instance, and follows the keys file. Closing it closes all three.
 */
export async function runArtifact(
  artifactDir: string,
  env: NodeJS.ProcessEnv = process.env,
  options: RunArtifactOptions = {},
): Promise<RunningInstance> {
  const launch = resolveArtifactConfig(artifactDir, options, env);
  const log = createLogger(launch.instance.logLevel);
  let tunnel: SshTunnel | undefined;
  let config = launch.instance;
  if (launch.ssh) {
    const { host, port } = parseSourceUrl(config.sourceUrl).options;
    tunnel = await openSshTunnel(launch.ssh, { host, port });
    config = { ...config, sourceUrl: sourceUrlThroughTunnel(config.sourceUrl, tunnel) };
    log.info('SSH tunnel to the source open');
  }
  let instance: RunningInstance;
  try {
    instance = await startInstance(config, log, {
      onFatal: options.onFatal,
      replicationId: launch.replicationId,
      replicationPaused: launch.replicationPaused,
      followUrl: launch.followUrl,
      changeFeed: launch.changeFeed,
      // Through a tunnel the URL names a local port that changes: checkpoints know the source by its own.
      sourceAddress: launch.instance.sourceUrl,
    });
  } catch (error) {
    await tunnel?.close();
    throw error;
  }
  const watcher = launch.keysFile ? watchKeysFile(launch.keysFile, instance.keys, log) : undefined;
  log.info(
    { buildId: launch.manifest.buildId, buildHash: launch.manifest.buildHash },
    'serving from a build artifact',
  );
  return {
    ...instance,
    async close() {
      watcher?.close();
      await instance.close();
      await tunnel?.close();
    },
  };
}
