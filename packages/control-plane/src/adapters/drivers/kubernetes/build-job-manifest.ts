import {
  BUILD_SOURCE_URL_KEY,
  BUILD_SSH_KEY_KEY,
  buildCredentialName,
} from './build-credential.ts';
import { buildObjectName, objectLabels } from './kubernetes-names.ts';
import type { KubernetesObject } from './kubernetes-object.ts';
import { CONTAINER_SECURITY, POD_SECURITY, RUN_AS } from './pod-security.ts';

export interface BuildJobOptions {
  /** The Replix runtime image (the Job runs the same code as the control plane). */
  readonly image: string;
  /** The `replix` CLI inside the image; the Job runs its `build-job` command. */
  readonly replixBin: string;
  /**
   * The control plane's namespace: the artifacts claim and the store Secret are namespaced,
   * so the Job that mounts them runs beside them.
   */
  readonly namespace: string;
  /**
   * The operator's Secret with the control plane's `DATABASE_URL` (the Job records the build
   * in the store); only its `DATABASE_URL` key is referenced, never `REPLIX_SECRET_KEY`.
   */
  readonly storeSecretName: string;
  /** The ReadWriteMany claim of the data folder the api role serves artifacts from. */
  readonly artifactsClaim: string;
  /** Where the claim is mounted: the data folder path every control-plane role uses. */
  readonly dataDir: string;
  /** The longest a build may run, in seconds (`activeDeadlineSeconds`). */
  readonly deadlineSeconds: number;
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
}

export interface BuildJobInput {
  readonly buildId: string;
  /** The attempt the builder claimed; the Job works under that claim. */
  readonly attempt: number;
  /** Makes the Job's name this launch's own (an attempt given back is launched again). */
  readonly launchId: string;
  readonly databaseId: string;
  readonly accountId: string;
}

/** A finished Job stays this long for its logs, then Kubernetes deletes it. */
const FINISHED_TTL_SECONDS = 3600;

/** The Job of one launch of a build's attempt. */
export function buildJobName(input: Pick<BuildJobInput, 'buildId' | 'attempt' | 'launchId'>) {
  return buildObjectName(`${input.buildId}-${input.attempt}-${input.launchId}`);
}

/**
 * One build attempt as a Job running `replix build-job`. It runs once (`backoffLimit: 0`):
 * retries belong to the build queue's retry policy (`jobs/retry-policy.ts`), which sees every
 * attempt. The store's URL comes from the store Secret and the build's source credential from
 * the Job's own Secret (build-credential.ts), both by reference, so the Job object carries no
 * secret; the master key is not among them.
 */
export function buildJobManifest(input: BuildJobInput, options: BuildJobOptions): KubernetesObject {
  const labels = objectLabels(
    { accountId: input.accountId, databaseId: input.databaseId, buildId: input.buildId },
    'build',
  );
  const name = buildJobName(input);
  const fromSecret = (secret: string, key: string, optional?: true) => ({
    name: key,
    valueFrom: { secretKeyRef: { name: secret, key, ...(optional ? { optional } : {}) } },
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: options.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: options.deadlineSeconds,
      ttlSecondsAfterFinished: FINISHED_TTL_SECONDS,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          // The claim's files belong to the group every control-plane pod runs as.
          securityContext: { ...POD_SECURITY, fsGroup: RUN_AS },
          containers: [
            {
              name: 'build',
              image: options.image,
              ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
              command: ['node', options.replixBin, 'build-job'],
              env: [
                fromSecret(options.storeSecretName, 'DATABASE_URL'),
                fromSecret(buildCredentialName(name), BUILD_SOURCE_URL_KEY),
                // Only connections through an SSH tunnel have a key.
                fromSecret(buildCredentialName(name), BUILD_SSH_KEY_KEY, true),
                { name: 'HOME', value: '/tmp' },
                { name: 'REPLIX_DATA_DIR', value: options.dataDir },
                { name: 'REPLIX_BUILD_ID', value: input.buildId },
                { name: 'REPLIX_BUILD_ATTEMPT', value: String(input.attempt) },
                { name: 'REPLIX_BUILD_COMPUTE_TYPE', value: 'kubernetes.job' },
              ],
              resources: {
                requests: { cpu: '500m', memory: '1024Mi' },
                limits: { cpu: '1000m', memory: '1024Mi' },
              },
              securityContext: CONTAINER_SECURITY,
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'data', mountPath: options.dataDir },
              ],
            },
          ],
          volumes: [
            { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } },
            { name: 'data', persistentVolumeClaim: { claimName: options.artifactsClaim } },
          ],
        },
      },
    },
  };
}
