import { ConfigError } from '@replix/runtime';
import { tracingActive } from '@replix/runtime/tracing';
import type { Logger } from 'pino';
import type { BuildRunner } from '../../application/builder/build-runner.ts';
import type { ControlPlaneConfig } from '../../config.ts';
import type { StoreDb } from '../store/open-store.ts';
import type { Driver } from './driver.ts';
import type { BuildCredentialSource } from './kubernetes/build-credential.ts';
import { ProcessDriver } from './process/process-driver.ts';
import { tracedDriver } from './traced-driver.ts';

/**
 * The driver named by the configuration (`REPLIX_DRIVER`, checked when it was decoded), with
 * spans around its calls when tracing is on. The Kubernetes one, and its client, are loaded
 * only when named.
 */
export async function createDriver(
  config: ControlPlaneConfig,
  log: Logger,
  db?: StoreDb,
): Promise<Driver> {
  const driver = await namedDriver(config, log, db);
  return tracingActive() ? tracedDriver(driver) : driver;
}

async function namedDriver(config: ControlPlaneConfig, log: Logger, db?: StoreDb): Promise<Driver> {
  switch (config.driver) {
    case 'process':
      return new ProcessDriver({
        dataDir: config.dataDir,
        log,
        tracing: config.tracing,
        keepRunningOnShutdown: config.keepInstancesOnStop,
      });
    case 'kubernetes': {
      if (!config.kubernetes || !db)
        throw new ConfigError('The kubernetes driver is not configured.');
      const { kubernetesDriverFrom } = await import('./kubernetes/kubernetes-setup.ts');
      return kubernetesDriverFrom(config, log, db);
    }
  }
}

/**
 * Where the builder role runs builds: with the Kubernetes driver, as Jobs (mounting the
 * artifacts claim at the data folder); otherwise undefined, in the builder's own process.
 */
export async function createBuildRunner(
  config: ControlPlaneConfig,
  log: Logger,
  db: StoreDb,
  credentialOf: BuildCredentialSource,
): Promise<BuildRunner | undefined> {
  if (config.driver !== 'kubernetes') return undefined;
  const { kubernetesBuildRunnerFrom } = await import('./kubernetes/kubernetes-setup.ts');
  return kubernetesBuildRunnerFrom(config, log, db, credentialOf);
}
