import type { loadS3Sdk } from '@replix/instance';
import type { Logger } from 'pino';
import {
  type CheckpointBucket,
  DEFAULT_CHECKPOINT_REGION,
  databaseCheckpointPrefix,
} from './checkpoint-bucket.ts';

/**
 * Removing a database's checkpoints from the bucket (terminate, delete): every object under
 * `<prefix><databaseId>/`, every replica's, finished checkpoints and unfinished uploads alike.
 * The S3 SDK is `@replix/instance`'s, loaded here on the first call: a control plane without a
 * bucket never loads it.
 */

type S3Sdk = Awaited<ReturnType<typeof loadS3Sdk>>;
type S3Client = InstanceType<S3Sdk['S3Client']>;

export interface DropCheckpointOptions {
  /** Keys asked for per listing page: at most 1000 (S3's maximum and default). */
  readonly listPageSize?: number;
}

const MAX_LIST_PAGE = 1000;
const MANIFEST_SUFFIX = '/manifest.json';

/** The S3 error code of a failure (`AccessDenied`), or the network's (`ECONNREFUSED`). */
function errorCode(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const { Code, code } = error as { Code?: unknown; code?: unknown };
  if (typeof Code === 'string') return Code;
  if (typeof code === 'string') return code;
  return error.name;
}

/** Every key under `prefix`, page after page. */
async function keysUnder(
  sdk: S3Sdk,
  client: S3Client,
  bucket: string,
  prefix: string,
  pageSize: number,
): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new sdk.ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        MaxKeys: pageSize,
        ContinuationToken: token,
      }),
    );
    for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys;
}

/**
 * Deletes `keys` one by one, as the instance does: a single-object delete works with every
 * S3-compatible server (a batch delete must carry a checksum, and some refuse the SDK's), and a
 * database holds a few objects per replica.
 */
async function deleteAll(
  sdk: S3Sdk,
  client: S3Client,
  bucket: string,
  keys: readonly string[],
): Promise<void> {
  for (const key of keys) {
    await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }
}

/**
 * Removes every object of the database's checkpoints, each checkpoint's manifest first (so one
 * half removed is never listed, as in the instance's `S3Checkpoints`); resolves with how many.
 * The control plane's own credentials are used: the AWS SDK's default chain (its environment's
 * `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`, or its pod's identity). A failure is logged
 * and thrown as a message with the S3 error code only: the SDK's own can name the endpoint's
 * host, so it is neither quoted nor kept as the cause.
 */
export async function dropCheckpointObjects(
  bucket: CheckpointBucket,
  databaseId: string,
  log: Logger,
  options: DropCheckpointOptions = {},
): Promise<number> {
  const prefix = databaseCheckpointPrefix(bucket, databaseId);
  const { listPageSize = MAX_LIST_PAGE } = options;
  if (!Number.isInteger(listPageSize) || listPageSize < 1 || listPageSize > MAX_LIST_PAGE) {
    throw new RangeError(`listPageSize must be an integer from 1 to ${MAX_LIST_PAGE}.`);
  }
  let doing = 'loading the S3 client';
  let client: S3Client | undefined;
  try {
    const sdk = await (await import('@replix/instance')).loadS3Sdk();
    client = new sdk.S3Client({
      region: bucket.region ?? DEFAULT_CHECKPOINT_REGION,
      endpoint: bucket.endpoint,
      forcePathStyle: bucket.pathStyle,
      // A bucket that does not answer must not hold the reconciler's goal for long.
      requestHandler: { connectionTimeout: 10_000, requestTimeout: 60_000 },
    });
    doing = 'listing them';
    const keys = await keysUnder(sdk, client, bucket.bucket, prefix, listPageSize);
    const manifests = keys.filter((key) => key.endsWith(MANIFEST_SUFFIX));
    const others = keys.filter((key) => !key.endsWith(MANIFEST_SUFFIX));
    doing = 'removing them';
    await deleteAll(sdk, client, bucket.bucket, manifests);
    await deleteAll(sdk, client, bucket.bucket, others);
    if (keys.length > 0) {
      log.info({ databaseId, prefix, objects: keys.length }, 'checkpoints removed');
    }
    return keys.length;
  } catch (error) {
    const code = errorCode(error);
    log.error({ databaseId, prefix, code }, `removing the checkpoints failed while ${doing}`);
    throw new Error(
      `Removing the checkpoints of database ${databaseId} from the S3 bucket failed while ${doing} (${code}).`,
    );
  } finally {
    client?.destroy();
  }
}
