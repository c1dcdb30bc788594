import { heapFlags } from '@replix/instance-protocol';
import { HTTP_LIMITS } from '@replix/runtime';
import { replicaReplicationId } from '../../../domain/replication-id.ts';
import { keysFileText } from '../instance-key-set.ts';
import { type InstanceLaunch, launchEnvironment } from '../instance-launch.ts';
import { artifactFetchScript } from './artifact-fetch-script.ts';
import {
  CHECKPOINT_DIR,
  CHECKPOINT_VOLUME,
  type CheckpointBucket,
  checkpointCredentials,
  checkpointVariables,
  checkpointVolume,
} from './checkpoint-bucket.ts';
import { instanceSpreadConstraints } from './instance-spread.ts';
import {
  instanceKeysName,
  instanceObjectName,
  instancePodSelector,
  instanceSecretName,
  LABELS,
  namespaceFor,
  objectLabels,
  replicaObjectName,
  replicaPodSelector,
} from './kubernetes-names.ts';
import { type KubernetesObject, secretData } from './kubernetes-object.ts';
import { CONTAINER_SECURITY, POD_SECURITY, RUN_AS } from './pod-security.ts';

/**
 * How the build's artifact reaches the instance pod.
 *
 * Design note: we fetch it at start (`fetch`) by default. An artifact is a few files — one
 * bundled `instance.mjs` and JSON (docs/control-plane/builds.md, "Artifact layout") — listed
 * with their sha256 in `manifest.json`. An init container of the one Replix image fetches them
 * from the control plane's authenticated artifact endpoint into an `emptyDir` and checks the
 * manifest against the sha256 the Deployment pins and every file against the manifest
 * (`artifact-fetch-script.ts`). So a build needs no container engine and no registry push
 * (neither runs on the builder's machines), nodes pull one image for every database, and a
 * pod can only run the bytes the build wrote. `image` is for clusters that bake each build
 * into an image (`imageUri`) and pull it with the cluster's own registry credentials: the
 * image must hold the artifact at `/artifact`.
 */
export type ArtifactDelivery =
  | {
      readonly kind: 'fetch';
      /** The build's artifact endpoint: `<url>/manifest.json`, `<url>/<file>`. */
      readonly url: string;
      /** sha256 (hex) of the build's `manifest.json`. */
      readonly manifestSha256: string;
      /** The bearer token the endpoint accepts for this build; kept in the instance Secret. */
      readonly token: string;
    }
  | { readonly kind: 'image'; readonly imageUri: string };

export interface InstanceManifestOptions {
  /** The Replix runtime image (Node 24 and the `replix` CLI). */
  readonly image: string;
  /** `replix.js` inside the image. */
  readonly replixBin: string;
  /** `replix-{region}`: see namespaceFor. */
  readonly namespacePattern: string;
  readonly imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** Where pods keep their checkpoints (`REPLIX_K8S_CHECKPOINT_*`); undefined: nowhere. */
  readonly checkpoints?: CheckpointBucket | undefined;
}

export interface InstanceManifestInput {
  readonly launch: InstanceLaunch;
  readonly accountId: string;
  readonly region: string;
  /** Replicas of this instance (read replicas), one Deployment each; 1 without replicas. */
  readonly replicas: number;
  readonly artifact: ArtifactDelivery;
  /**
   * The leader Service's address (`http://<clusterIP>:8080`), the followers'
   * `REPLIX_FOLLOW_URL`: needed when the replicas follow (`followsLeader`).
   */
  readonly leaderUrl?: string | undefined;
}

/** The port the instance listens on inside its pod; the Service maps it. */
export const INSTANCE_PORT = 8080;
export const ARTIFACT_DIR = '/artifact';
export const KEYS_DIR = '/etc/replix/keys';
export const KEYS_FILE_NAME = 'keys.json';
/** The keys file the instance watches (`REPLIX_KEYS_FILE`), a mounted Secret. */
export const KEYS_FILE = `${KEYS_DIR}/${KEYS_FILE_NAME}`;
/** Launch variables that carry secrets: read from the instance Secret, never literals. */
export const SECRET_VARIABLES = [
  'REPLIX_SOURCE_URL',
  'REPLIX_KEY_SECRET',
  'REPLIX_SSH_PRIVATE_KEY',
  // A collector's token, when tracing is on (docs/tracing.md).
  'OTEL_EXPORTER_OTLP_HEADERS',
] as const;
const ARTIFACT_TOKEN_KEY = 'REPLIX_ARTIFACT_TOKEN';
/**
 * Seconds the pod stays in the Service after it is told to stop, so endpoints everywhere stop
 * sending it new requests before the instance stops accepting them.
 */
export const PRE_STOP_SECONDS = 5;
/**
 * SIGTERM to SIGKILL: the pre-stop wait, the instance's drain bound, and a margin for it to
 * close its source connections.
 */
export const TERMINATION_GRACE_SECONDS =
  PRE_STOP_SECONDS + Math.ceil(HTTP_LIMITS.drain_timeout_ms / 1000) + 5;
/** The instance introspects its source before it listens; the process driver allows 120 s. */
const STARTUP_SECONDS = 120;

/** The Secret of one instance's launch secrets: source URL, key secret, SSH key, artifact token. */
export function instanceSecret(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject {
  const env = launchEnvironment(input.launch, KEYS_FILE);
  const entries: Record<string, string> = {};
  for (const name of SECRET_VARIABLES) if (env[name] !== undefined) entries[name] = env[name];
  if (input.artifact.kind === 'fetch') entries[ARTIFACT_TOKEN_KEY] = input.artifact.token;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadataOf(instanceSecretName(input.launch.instanceId), input, options),
    type: 'Opaque',
    data: secretData(entries),
  };
}

/**
 * The key-set Secret, mounted whole (no `subPath`, which would freeze it) as the keys file:
 * the kubelet swaps in a new version when the Secret changes, and the instance, which watches
 * `REPLIX_KEYS_FILE`, takes the new keys without a restart.
 */
export function instanceKeysSecret(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: metadataOf(instanceKeysName(input.launch.instanceId), input, options),
    type: 'Opaque',
    data: secretData({ [KEYS_FILE_NAME]: keysFileText(input.launch.keys) }),
  };
}

function metadataOf(name: string, input: InstanceManifestInput, options: InstanceManifestOptions) {
  return {
    name,
    namespace: namespaceFor(options.namespacePattern, input),
    labels: objectLabels(
      {
        accountId: input.accountId,
        databaseId: input.launch.databaseId,
        instanceId: input.launch.instanceId,
        buildId: input.launch.buildId,
      },
      'instance',
    ),
  };
}

/**
 * Whether the instance's replicas follow replica 0 (docs/replication.md, "Replicas that
 * follow"): with a checkpoint bucket, which followers load the leader's checkpoints from, and
 * more than one replica. Without a bucket each replica follows the source on its own.
 */
export function followsLeader(
  input: Pick<InstanceManifestInput, 'replicas'>,
  options: Pick<InstanceManifestOptions, 'checkpoints'>,
): boolean {
  return options.checkpoints !== undefined && input.replicas > 1;
}

/**
 * The role variables of replica `ordinal` when the replicas follow: replica 0, the leader,
 * keeps the change feed; replica k > 0 follows it through the leader Service.
 */
function roleVariables(input: InstanceManifestInput, ordinal: number): Record<string, string> {
  if (ordinal === 0) return { REPLIX_CHANGE_FEED: '1' };
  if (input.leaderUrl === undefined) {
    throw new Error("Follower replicas need the leader Service's address (leaderUrl).");
  }
  return { REPLIX_FOLLOW_URL: input.leaderUrl };
}

/**
 * The environment: literals for plain settings, references into the Secret for secrets, the
 * bucket's credentials (if a Secret is named) taken from that Secret by reference. Each
 * replica gets its own replication id. With a checkpoint bucket and one replica, or without a
 * bucket, each replica follows the source itself and keeps its checkpoints (if any) under its
 * own prefix; with a bucket and several, replica 0 keeps the change feed and the others follow
 * it, starting from its checkpoints (replica 0's prefix), so only replica 0 holds a slot or
 * binlog client on the source.
 */
function containerEnv(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
  ordinal: number,
): Array<Record<string, unknown>> {
  const secretName = instanceSecretName(input.launch.instanceId);
  const bucket = options.checkpoints;
  const following = followsLeader(input, options);
  const env = {
    ...launchEnvironment(input.launch, KEYS_FILE),
    ...(bucket
      ? checkpointVariables(bucket, input.launch.databaseId, following ? 0 : ordinal)
      : {}),
    ...(following ? roleVariables(input, ordinal) : {}),
  };
  env.REPLIX_REPLICATION_ID = replicaReplicationId(input.launch.replicationId, ordinal);
  const secret = new Set<string>(SECRET_VARIABLES);
  const variables = Object.keys(env)
    .sort()
    .map((name) =>
      secret.has(name)
        ? { name, valueFrom: { secretKeyRef: { name: secretName, key: name } } }
        : { name, value: env[name] },
    );
  const credentials = bucket ? checkpointCredentials(bucket) : [];
  // The root file system is read-only: anything that writes under HOME writes to /tmp.
  return [...credentials, ...variables, { name: 'HOME', value: '/tmp' }];
}

function resourcesOf(input: InstanceManifestInput) {
  const { taskCpu, taskMemoryMb } = input.launch.settings;
  const amounts = { cpu: `${Math.round(taskCpu * 1000)}m`, memory: `${taskMemoryMb}Mi` };
  // Requests equal limits: the pod is Guaranteed, as the size promises.
  return { requests: { ...amounts }, limits: { ...amounts } };
}

function fetchContainer(input: InstanceManifestInput, options: InstanceManifestOptions) {
  if (input.artifact.kind !== 'fetch') return [];
  return [
    {
      name: 'fetch-artifact',
      image: options.image,
      ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
      command: ['node', '--input-type=module', '-e', artifactFetchScript()],
      env: [
        { name: 'REPLIX_ARTIFACT_DIR', value: ARTIFACT_DIR },
        { name: 'REPLIX_ARTIFACT_SHA256', value: input.artifact.manifestSha256 },
        {
          name: ARTIFACT_TOKEN_KEY,
          valueFrom: {
            secretKeyRef: {
              name: instanceSecretName(input.launch.instanceId),
              key: ARTIFACT_TOKEN_KEY,
            },
          },
        },
        { name: 'REPLIX_ARTIFACT_URL', value: input.artifact.url },
      ],
      resources: {
        requests: { cpu: '100m', memory: '128Mi' },
        limits: { cpu: '500m', memory: '256Mi' },
      },
      securityContext: CONTAINER_SECURITY,
      volumeMounts: [{ name: 'artifact', mountPath: ARTIFACT_DIR }],
    },
  ];
}

/** On the instance Service: how many replicas the instance has, whatever runs now. */
export const REPLICAS_ANNOTATION = 'replix.dev/replicas';

/**
 * The instance's own Service: one ClusterIP in front of all its replicas, the instance's
 * `privateUrl` (health, metrics, keys and admin calls of the control plane). The driver reads
 * its address from the API, so nothing depends on cluster DNS. It records the replica count, so
 * a replica whose Deployment is gone still counts as one that does not run.
 */
export function instanceService(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject {
  const { launch } = input;
  const metadata = metadataOf(instanceObjectName(launch.instanceId), input, options);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...metadata, annotations: { [REPLICAS_ANNOTATION]: String(input.replicas) } },
    spec: {
      type: 'ClusterIP',
      selector: instancePodSelector(launch.databaseId, launch.instanceId),
      ports: [{ name: 'http', port: INSTANCE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

/**
 * The leader Service, when the replicas follow (`followsLeader`; null otherwise): a ClusterIP in
 * front of replica 0's pods only, named as its Deployment, whose address the followers get as
 * `REPLIX_FOLLOW_URL`. A stable address: the pod behind it may be replaced (a new boot, which
 * followers start over from), the Service's cluster IP stays. Read from the API like the
 * instance Service's, so nothing depends on cluster DNS.
 */
export function leaderService(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject | null {
  if (!followsLeader(input, options)) return null;
  const { launch } = input;
  const base = metadataOf(replicaObjectName(launch.instanceId, 0), input, options);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { ...base, labels: { ...base.labels, [LABELS.replica]: '0' } },
    spec: {
      type: 'ClusterIP',
      selector: replicaPodSelector(launch.databaseId, launch.instanceId, 0),
      ports: [{ name: 'http', port: INSTANCE_PORT, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

/**
 * The Deployment of replica `ordinal`: one pod of `replix serve --artifact`, ready once
 * `GET /health` answers 200 (the snapshot is loaded), alive while it listens. One Deployment
 * per replica (rather than one with `replicas: n`) gives each pod a stable ordinal, so a
 * replica restarted resumes the replication state named after it.
 */
export function instanceDeployment(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
  ordinal = 0,
): KubernetesObject {
  const { launch } = input;
  if (!Number.isInteger(ordinal) || ordinal < 0 || ordinal >= input.replicas) {
    throw new Error('A replica ordinal is an integer from 0 to replicas − 1.');
  }
  const base = metadataOf(replicaObjectName(launch.instanceId, ordinal), input, options);
  const metadata = { ...base, labels: { ...base.labels, [LABELS.replica]: String(ordinal) } };
  const fetched = input.artifact.kind === 'fetch';
  const checkpoints = options.checkpoints !== undefined;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      replicas: 1,
      revisionHistoryLimit: 1,
      selector: {
        matchLabels: replicaPodSelector(launch.databaseId, launch.instanceId, ordinal),
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: metadata.labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          securityContext: { ...POD_SECURITY, fsGroup: RUN_AS },
          // The instance's replicas on different zones and nodes where the cluster allows.
          topologySpreadConstraints: instanceSpreadConstraints(
            launch.databaseId,
            launch.instanceId,
          ),
          initContainers: fetchContainer(input, options),
          containers: [
            {
              name: 'instance',
              image: fetched ? options.image : (input.artifact as { imageUri: string }).imageUri,
              ...(options.imagePullPolicy ? { imagePullPolicy: options.imagePullPolicy } : {}),
              command: [
                'node',
                ...heapFlags(launch.settings.taskMemoryMb),
                options.replixBin,
                'serve',
                '--artifact',
                ARTIFACT_DIR,
                '--port',
                String(INSTANCE_PORT),
                '--host',
                '0.0.0.0',
              ],
              ports: [{ name: 'http', containerPort: INSTANCE_PORT, protocol: 'TCP' }],
              env: containerEnv(input, options, ordinal),
              resources: resourcesOf(input),
              startupProbe: {
                tcpSocket: { port: 'http' },
                periodSeconds: 2,
                failureThreshold: STARTUP_SECONDS / 2,
              },
              readinessProbe: {
                httpGet: { path: '/health', port: 'http' },
                periodSeconds: 2,
                timeoutSeconds: 1,
                failureThreshold: 2,
              },
              // Listening is alive: /health answers 503 while a snapshot loads, which is no
              // reason to restart.
              livenessProbe: {
                tcpSocket: { port: 'http' },
                periodSeconds: 10,
                timeoutSeconds: 2,
                failureThreshold: 3,
              },
              lifecycle: { preStop: { sleep: { seconds: PRE_STOP_SECONDS } } },
              securityContext: CONTAINER_SECURITY,
              volumeMounts: [
                // An image-delivered artifact is in the image: nothing may hide it.
                ...(fetched ? [{ name: 'artifact', mountPath: ARTIFACT_DIR, readOnly: true }] : []),
                { name: 'keys', mountPath: KEYS_DIR, readOnly: true },
                { name: 'tmp', mountPath: '/tmp' },
                ...(checkpoints ? [{ name: CHECKPOINT_VOLUME, mountPath: CHECKPOINT_DIR }] : []),
              ],
            },
          ],
          volumes: [
            ...(fetched ? [{ name: 'artifact', emptyDir: { sizeLimit: '256Mi' } }] : []),
            {
              name: 'keys',
              secret: { secretName: instanceKeysName(launch.instanceId), defaultMode: 0o440 },
            },
            { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
            ...(checkpoints ? [checkpointVolume(launch.settings.taskMemoryMb)] : []),
          ],
        },
      },
    },
  };
}

/** The Deployments of every replica, by ordinal. */
export function replicaDeployments(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject[] {
  if (!Number.isInteger(input.replicas) || input.replicas < 1) {
    throw new Error('An instance runs at least one replica.');
  }
  return Array.from({ length: input.replicas }, (_, ordinal) =>
    instanceDeployment(input, options, ordinal),
  );
}

/**
 * The objects of one instance, in apply order: its Secrets, its Service, the leader Service
 * when the replicas follow, then one Deployment per replica. Once replica 0's Deployment has a
 * uid, the driver applies the Secrets and the Services again `ownedBy` it
 * (kubernetes-object.ts), so deleting it deletes them.
 */
export function instanceManifests(
  input: InstanceManifestInput,
  options: InstanceManifestOptions,
): KubernetesObject[] {
  const leader = leaderService(input, options);
  return [
    instanceSecret(input, options),
    instanceKeysSecret(input, options),
    instanceService(input, options),
    ...(leader ? [leader] : []),
    ...replicaDeployments(input, options),
  ];
}
