import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '@replix/instance/config';
import type { Logger } from 'pino';
import { artifactToken } from '../builder/artifact-token.ts';
import type { BuildRunner } from '../builder/build-runner.ts';
import type { ControlPlaneConfig } from '../config.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { Driver } from './driver.ts';
import type { InstanceLaunch } from './instance-launch.ts';
import type { BuildJobOptions } from './kubernetes/build-job-manifest.ts';
import type { ArtifactDelivery } from './kubernetes/instance-manifests.ts';
import { KubernetesApi } from './kubernetes/kubernetes-api.ts';
import { KubernetesBuildRunner } from './kubernetes/kubernetes-build-runner.ts';
import { type DatabasePlace, KubernetesDriver } from './kubernetes/kubernetes-driver.ts';
import type { KubernetesSettings } from './kubernetes/kubernetes-settings.ts';
import { ProcessDriver } from './process-driver.ts';

/** The driver named by the configuration (`REPLIX_DRIVER`, checked when it was decoded). */
export function createDriver(config: ControlPlaneConfig, log: Logger, db?: StoreDb): Driver {
  switch (config.driver) {
    case 'process':
      return new ProcessDriver({ dataDir: config.dataDir, log });
    case 'kubernetes': {
      if (!config.kubernetes || !db)
        throw new ConfigError('The kubernetes driver is not configured.');
      // KUBECONFIG, ~/.kube/config, or the pod's service account in a cluster.
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromDefault();
      return kubernetesDriverOf(config.kubernetes, {
        kubeConfig,
        log,
        secretKey: config.secretKey,
        placeOf: placeFromStore(db),
      });
    }
  }
}

/**
 * Where the builder role runs builds: with the Kubernetes driver, as Jobs (mounting the
 * artifacts claim at the data folder); otherwise undefined, in the builder's own process.
 */
export function createBuildRunner(
  config: ControlPlaneConfig,
  log: Logger,
  db: StoreDb,
): BuildRunner | undefined {
  if (config.driver !== 'kubernetes') return undefined;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return new KubernetesBuildRunner({
    api: new KubernetesApi(kubeConfig),
    db,
    log,
    job: buildJobOptionsOf(config),
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
    const row = await db
      .selectFrom('databases')
      .select(['account_id', 'region'])
      .where('id', '=', databaseId)
      .executeTakeFirst();
    if (!row) throw new Error(`Database ${databaseId} is not in the store.`);
    return { accountId: row.account_id, region: row.region };
  };
}
