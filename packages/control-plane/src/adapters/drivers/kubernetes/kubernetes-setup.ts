import type { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '@replix/runtime';
import type { Logger } from 'pino';
import type { BuildRunner } from '../../../application/builder/build-runner.ts';
import type { ControlPlaneConfig } from '../../../config.ts';
import { artifactToken } from '../../../domain/artifact-token.ts';
import { databasePlaceOf } from '../../store/database-store.ts';
import type { StoreDb } from '../../store/open-store.ts';
import type { InstanceLaunch } from '../instance-launch.ts';
import type { BuildCredentialSource } from './build-credential.ts';
import type { BuildJobOptions } from './build-job-manifest.ts';
import type { ArtifactDelivery } from './instance-manifests.ts';
import { KubernetesApi } from './kubernetes-api.ts';
import { KubernetesBuildRunner } from './kubernetes-build-runner.ts';
import { type DatabasePlace, KubernetesDriver } from './kubernetes-driver.ts';
import type { KubernetesSettings } from './kubernetes-settings.ts';

/**
 * The Kubernetes driver and build runner of the configuration, with their client. Loaded by
 * `create-driver.ts` only when `REPLIX_DRIVER=kubernetes`: the process driver never loads the
 * Kubernetes client.
 */

/** The Kubernetes driver of the configuration (KUBECONFIG, ~/.kube/config, or the pod's account). */
export function kubernetesDriverFrom(
  config: ControlPlaneConfig,
  log: Logger,
  db: StoreDb,
): KubernetesDriver {
  if (!config.kubernetes) throw new ConfigError('The kubernetes driver is not configured.');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubernetesDriverOf(config.kubernetes, {
    kubeConfig,
    log,
    secretKey: config.secretKey,
    placeOf: placeFromStore(db),
  });
}

/**
 * Builds as Jobs, mounting the artifacts claim at the data folder, each given its own build's
 * source credential, opened here with the secret key (which the Jobs never get).
 */
export function kubernetesBuildRunnerFrom(
  config: ControlPlaneConfig,
  log: Logger,
  db: StoreDb,
  credentialOf: BuildCredentialSource,
): BuildRunner {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return new KubernetesBuildRunner({
    api: new KubernetesApi(kubeConfig),
    db,
    log,
    job: buildJobOptionsOf(config),
    credentialOf,
  });
}

/**
 * What each build Job runs and mounts, from the builder's own settings: the claim goes at the
 * builder's data folder path, the one every role (the api serving artifacts) uses.
 */
export function buildJobOptionsOf(config: ControlPlaneConfig): BuildJobOptions {
  if (!config.kubernetes) throw new ConfigError('The kubernetes driver is not configured.');
  const { image, replixBin, builds } = config.kubernetes;
  return {
    image,
    replixBin,
    namespace: builds.namespace,
    storeSecretName: builds.storeSecret,
    artifactsClaim: builds.artifactsClaim,
    dataDir: config.dataDir,
    deadlineSeconds: builds.deadlineSeconds,
  };
}

/** The Kubernetes driver of the settings, its artifacts fetched from the api role. */
export function kubernetesDriverOf(
  settings: Omit<KubernetesSettings, 'builds'>,
  dependencies: {
    readonly kubeConfig: KubeConfig;
    readonly log: Logger;
    readonly secretKey: Buffer;
    readonly placeOf: (databaseId: string) => Promise<DatabasePlace>;
    readonly startTimeoutMs?: number;
  },
): KubernetesDriver {
  return new KubernetesDriver({
    api: new KubernetesApi(dependencies.kubeConfig),
    log: dependencies.log,
    instances: {
      image: settings.image,
      replixBin: settings.replixBin,
      namespacePattern: settings.namespacePattern,
      checkpoints: settings.checkpoints,
    },
    endpoints: {
      hostPatterns: settings.hostPatterns,
      route: settings.route,
      scheme: settings.endpointScheme,
    },
    artifactDelivery: (launch) =>
      fetchedArtifact(settings.artifactUrl, dependencies.secretKey, launch),
    placeOf: dependencies.placeOf,
    ...(dependencies.startTimeoutMs ? { startTimeoutMs: dependencies.startTimeoutMs } : {}),
  });
}

/** The launch's build as the init container fetches it: URL, the manifest's sha256, token. */
async function fetchedArtifact(
  baseUrl: string,
  secretKey: Buffer,
  launch: InstanceLaunch,
): Promise<ArtifactDelivery> {
  const manifest = await readFile(join(launch.artifactDir, 'manifest.json'));
  return {
    kind: 'fetch',
    url: `${baseUrl}/internal/artifacts/${encodeURIComponent(launch.buildId)}`,
    manifestSha256: createHash('sha256').update(manifest).digest('hex'),
    token: artifactToken(secretKey, launch.buildId),
  };
}

/** A database's account and region from the store (deleted databases too: they are cleaned up). */
function placeFromStore(db: StoreDb) {
  return async (databaseId: string): Promise<DatabasePlace> => {
    const row = await databasePlaceOf(db, databaseId);
    if (!row) throw new Error(`Database ${databaseId} is not in the store.`);
    return { accountId: row.account_id, region: row.region };
  };
}
