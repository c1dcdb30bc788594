import { buildObjectName, namespaceFor, objectLabels } from './kubernetes-names.ts';
import type { KubernetesObject } from './kubernetes-object.ts';

export interface BuildJobOptions {
  /** The Replix runtime image (the builder runs the same code as the control plane). */
  readonly image: string;
  /**
   * The program that runs one build given `REPLIX_BUILD_ID`; the driver increment adds it to
   * the CLI, so it is a parameter here.
   */
  readonly command: readonly string[];
  readonly namespacePattern: string;
  /**
   * The operator's Secret with the control plane's `DATABASE_URL` (the builder records the
   * build in the store); only referenced, never read.
   */
  readonly storeSecretName: string;
  /** The longest a build may run, in seconds. */
  readonly deadlineSeconds: number;
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
}

export interface BuildJobInput {
  readonly buildId: string;
  readonly databaseId: string;
  readonly accountId: string;
  readonly region: string;
}

/** A finished Job stays this long for its logs, then Kubernetes deletes it. */
const FINISHED_TTL_SECONDS = 3600;
const RUN_AS = 10_001;

/**
 * One build as a Job. It runs once (`backoffLimit: 0`): retries belong to the build queue's
 * retry policy (`jobs/retry-policy.ts`), which sees every attempt.
 */
export function buildJobManifest(input: BuildJobInput, options: BuildJobOptions): KubernetesObject {
  const labels = objectLabels(
    { accountId: input.accountId, databaseId: input.databaseId, buildId: input.buildId },
    'build',
  );
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: buildObjectName(input.buildId),
      namespace: namespaceFor(options.namespacePattern, input),
      labels,
    },
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
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUN_AS,
            runAsGroup: RUN_AS,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'build',
              image: options.image,
              ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
              command: [...options.command],
              env: [
                {
                  name: 'DATABASE_URL',
                  valueFrom: {
                    secretKeyRef: { name: options.storeSecretName, key: 'DATABASE_URL' },
                  },
                },
                { name: 'HOME', value: '/tmp' },
                { name: 'REPLIX_BUILD_ID', value: input.buildId },
              ],
              resources: {
                requests: { cpu: '500m', memory: '1024Mi' },
                limits: { cpu: '1000m', memory: '1024Mi' },
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
        },
      },
    },
  };
}
