/**
 * Checkpoints on Kubernetes (`REPLIX_K8S_CHECKPOINT_*`): a pod's disk goes with it, so each
 * replica writes its checkpoints to a disk-backed `emptyDir` and uploads them to an S3 bucket,
 * and a new pod downloads the newest before it starts (docs/replication.md, "Checkpoints").
 * Keys: `<prefix><databaseId>/<ordinal>/<checkpoint>/<file>`, a folder per replica that
 * follows the source under its own replication slot or binlog client: replica 0 only, since
 * with a bucket the other replicas follow it (instance-manifests.ts, `followsLeader`), write
 * none and load replica 0's, under `<prefix><databaseId>/0/`.
 */

/** The bucket instance pods keep their checkpoints in, and how they reach it. */
export interface CheckpointBucket {
  /** `REPLIX_K8S_CHECKPOINT_BUCKET`. */
  readonly bucket: string;
  /** `REPLIX_K8S_CHECKPOINT_PREFIX` (default `replix/`): '' or ending in `/`. */
  readonly prefix: string;
  /** `REPLIX_K8S_CHECKPOINT_ENDPOINT`: an S3-compatible endpoint; undefined for AWS. */
  readonly endpoint?: string | undefined;
  /** `REPLIX_K8S_CHECKPOINT_REGION`; undefined: the instance's default, `us-east-1`. */
  readonly region?: string | undefined;
  /** `REPLIX_K8S_CHECKPOINT_PATH_STYLE`; undefined: the SDK's default (virtual-hosted). */
  readonly pathStyle?: boolean | undefined;
  /**
   * `REPLIX_K8S_CHECKPOINT_SECRET`: the Secret, in each instance namespace, whose
   * `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` the pods take by reference; undefined: the
   * pod's own identity (IRSA, workload identity).
   */
  readonly secret?: string | undefined;
}

/** The region the instance assumes when none is set (s3-checkpoint-settings.ts). */
export const DEFAULT_CHECKPOINT_REGION = 'us-east-1';
/** Where the instance container keeps its checkpoints (`REPLIX_CHECKPOINT_DIR`), an `emptyDir`. */
export const CHECKPOINT_DIR = '/var/replix/checkpoints';
export const CHECKPOINT_VOLUME = 'checkpoints';
/** The credential variables the pods take from `REPLIX_K8S_CHECKPOINT_SECRET`. */
export const CHECKPOINT_SECRET_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
/**
 * The `emptyDir`'s size limit over the task's memory: a checkpoint is about the snapshot's
 * size, the snapshot is capped at the memory, and the folder holds the newest checkpoint, the
 * one before it and one being written (or downloaded). A pod over its limit is evicted.
 */
const CHECKPOINT_DISK_FACTOR = 3;

/** The database's folder of keys, every replica's under it; an id is never a path's way out. */
export function databaseCheckpointPrefix(bucket: CheckpointBucket, databaseId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(databaseId)) throw new Error('Invalid database id.');
  return `${bucket.prefix}${databaseId}/`;
}

/** The key prefix of replica `ordinal`'s checkpoints. */
export function replicaCheckpointPrefix(
  bucket: CheckpointBucket,
  databaseId: string,
  ordinal: number,
): string {
  return `${databaseCheckpointPrefix(bucket, databaseId)}${ordinal}/`;
}

/** The literal checkpoint variables of replica `ordinal`'s instance container. */
export function checkpointVariables(
  bucket: CheckpointBucket,
  databaseId: string,
  ordinal: number,
): Record<string, string> {
  return {
    REPLIX_CHECKPOINT_DIR: CHECKPOINT_DIR,
    REPLIX_CHECKPOINT_S3_BUCKET: bucket.bucket,
    REPLIX_CHECKPOINT_S3_PREFIX: replicaCheckpointPrefix(bucket, databaseId, ordinal),
    ...(bucket.endpoint === undefined ? {} : { REPLIX_CHECKPOINT_S3_ENDPOINT: bucket.endpoint }),
    ...(bucket.region === undefined ? {} : { REPLIX_CHECKPOINT_S3_REGION: bucket.region }),
    ...(bucket.pathStyle === undefined
      ? {}
      : { REPLIX_CHECKPOINT_S3_PATH_STYLE: String(bucket.pathStyle) }),
  };
}

/** The credentials as references into the named Secret; none for the pod's own identity. */
export function checkpointCredentials(
  bucket: CheckpointBucket,
): Array<{ name: string; valueFrom: { secretKeyRef: { name: string; key: string } } }> {
  const secret = bucket.secret;
  if (secret === undefined) return [];
  return CHECKPOINT_SECRET_KEYS.map((key) => ({
    name: key,
    valueFrom: { secretKeyRef: { name: secret, key } },
  }));
}

/** The disk-backed `emptyDir` of the checkpoints, sized by the task's memory. */
export function checkpointVolume(taskMemoryMb: number) {
  return {
    name: CHECKPOINT_VOLUME,
    emptyDir: { sizeLimit: `${CHECKPOINT_DISK_FACTOR * taskMemoryMb}Mi` },
  };
}
