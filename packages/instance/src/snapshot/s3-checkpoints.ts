import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { checkS3Settings, type S3CheckpointSettings } from './s3-checkpoint-settings.ts';

/**
 * Checkpoints in an S3 bucket, so that any replica on any node can load them. A checkpoint
 * folder (see checkpoint-files.ts) is mirrored file by file:
 *
 *     <prefix><name>/structure.json
 *     <prefix><name>/buffers.bin
 *     <prefix><name>/manifest.json   uploaded last and removed first: a checkpoint is
 *                                    listed only while its manifest is there
 */

/** Tuning of the transfers; the defaults suit production. */
export interface S3CheckpointOptions {
  /** Size of each part of a multipart upload: at least 5 MiB (S3's minimum). Default 16 MiB. */
  readonly partSizeBytes?: number;
  /** Keys asked for per ListObjectsV2 page: at most 1000 (S3's maximum and default). */
  readonly listPageSize?: number;
}

const MANIFEST_FILE = 'manifest.json';
const MIB = 1024 * 1024;
const MIN_PART_SIZE = 5 * MIB;
const DEFAULT_PART_SIZE = 16 * MIB;
const MAX_LIST_PAGE = 1000;
const VALID_NAME = /^[0-9A-Za-z._-]+$/;

/** Whether `name` is safe as one segment of a key and of a local path. */
function isSafeName(name: string): boolean {
  return VALID_NAME.test(name) && name !== '.' && !name.includes('..');
}

function checkName(name: string, what: string): void {
  if (!isSafeName(name)) {
    throw new Error(
      `Invalid ${what} ${JSON.stringify(name)}: only letters, digits, '.', '_' and '-' are allowed, and no '..'.`,
    );
  }
}

/** The S3 error code of a failure (`NoSuchBucket`), or the network's (`ECONNREFUSED`). */
function errorCode(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const { Code, code } = error as { Code?: unknown; code?: unknown };
  if (typeof Code === 'string') return Code;
  if (typeof code === 'string') return code;
  return error.name;
}

/**
 * Runs one S3 operation; a failure says what failed and the S3 error code, never the SDK's own
 * message (which can hold the endpoint's host). The SDK's error stays as the cause.
 */
async function attempt<T>(action: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw new Error(`S3 checkpoints: ${action} failed (${errorCode(error)}).`, { cause: error });
  }
}

/** `files` with the manifest apart: it goes up last and comes off first, vouching for the rest. */
function splitManifest(files: readonly string[]): { manifest: string[]; others: string[] } {
  return {
    manifest: files.filter((file) => file === MANIFEST_FILE),
    others: files.filter((file) => file !== MANIFEST_FILE),
  };
}

function manifestLast(files: readonly string[]): string[] {
  const { manifest, others } = splitManifest(files);
  return [...others, ...manifest];
}

function manifestFirst(files: readonly string[]): string[] {
  const { manifest, others } = splitManifest(files);
  return [...manifest, ...others];
}

function clientConfig(settings: S3CheckpointSettings): S3ClientConfig {
  return {
    region: settings.region,
    endpoint: settings.endpoint,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    // Many S3-compatible servers refuse the CRC32 checksums the SDK adds to every upload since
    // 3.729 (R2, B2, older MinIO); each file's sha256 in the manifest guards the bytes anyway.
    ...(settings.endpoint === undefined ? {} : { requestChecksumCalculation: 'WHEN_REQUIRED' }),
  };
}

/** Checkpoint folders mirrored to and from an S3 bucket. */
export class S3Checkpoints {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #partSize: number;
  readonly #listPageSize: number;

  constructor(settings: S3CheckpointSettings, options: S3CheckpointOptions = {}) {
    checkS3Settings(settings);
    const { partSizeBytes = DEFAULT_PART_SIZE, listPageSize = MAX_LIST_PAGE } = options;
    if (!Number.isInteger(partSizeBytes) || partSizeBytes < MIN_PART_SIZE) {
      throw new RangeError(
        `partSizeBytes must be an integer of at least ${MIN_PART_SIZE} (5 MiB).`,
      );
    }
    if (!Number.isInteger(listPageSize) || listPageSize < 1 || listPageSize > MAX_LIST_PAGE) {
      throw new RangeError(`listPageSize must be an integer from 1 to ${MAX_LIST_PAGE}.`);
    }
    this.#client = new S3Client(clientConfig(settings));
    this.#bucket = settings.bucket;
    this.#prefix = settings.prefix;
    this.#partSize = partSizeBytes;
    this.#listPageSize = listPageSize;
  }

  /** Names of the checkpoints whose manifest.json exists under the prefix, sorted oldest first. */
  async list(): Promise<string[]> {
    const keys = await attempt('listing the checkpoints', () => this.#keysUnder(this.#prefix));
    const suffix = `/${MANIFEST_FILE}`;
    return (
      keys
        .filter((key) => key.endsWith(suffix))
        .map((key) => key.slice(this.#prefix.length, -suffix.length))
        // Anything deeper (another prefix nested under this one) is not a checkpoint of it.
        .filter(isSafeName)
        .sort()
    );
  }

  /**
   * Uploads the local checkpoint folder as `<prefix><name>/<file>`: every other file first,
   * manifest.json last (so a reader never sees a manifest without its files). Large files go up
   * in parts (multipart upload, streamed from disk; never read whole into memory).
   */
  async upload(folder: string, name: string): Promise<void> {
    checkName(name, 'checkpoint name');
    const files = await this.#localFiles(folder);
    if (!files.includes(MANIFEST_FILE)) {
      throw new Error(
        `Checkpoint "${name}" has no ${MANIFEST_FILE}: an unfinished checkpoint is not uploaded.`,
      );
    }
    // A manifest left by an earlier upload of this name must not vouch for files being replaced.
    await attempt(`uploading checkpoint "${name}" (clearing its old manifest)`, () =>
      this.#client.send(
        new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(name, MANIFEST_FILE) }),
      ),
    );
    for (const file of manifestLast(files)) {
      await attempt(`uploading checkpoint "${name}" (${file})`, () =>
        this.#uploadFile(join(folder, file), this.#key(name, file)),
      );
    }
  }

  /**
   * Downloads checkpoint `name` into local `folder` (created), streaming each object to disk,
   * the manifest last (a folder left by a failed download reads as unfinished). Throws if its
   * manifest is missing.
   */
  async download(name: string, folder: string): Promise<void> {
    checkName(name, 'checkpoint name');
    const files = await this.#remoteFiles(name, 'downloading');
    if (!files.includes(MANIFEST_FILE)) {
      throw new Error(
        `Checkpoint "${name}" has no ${MANIFEST_FILE} in S3: it is missing or unfinished.`,
      );
    }
    await mkdir(folder, { recursive: true });
    for (const file of manifestLast(files)) {
      await attempt(`downloading checkpoint "${name}" (${file})`, () =>
        this.#downloadFile(this.#key(name, file), join(folder, file)),
      );
    }
  }

  /**
   * Removes every object of checkpoint `name`, the manifest first (so a half-removed one is
   * never listed). A checkpoint with no objects is already removed.
   */
  async remove(name: string): Promise<void> {
    checkName(name, 'checkpoint name');
    const files = await this.#remoteFiles(name, 'removing');
    for (const file of manifestFirst(files)) {
      await attempt(`removing checkpoint "${name}" (${file})`, () =>
        this.#client.send(
          new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(name, file) }),
        ),
      );
    }
  }

  /** Keeps the newest `keep` checkpoints and removes the rest; the names removed, oldest first. */
  async prune(keep: number): Promise<string[]> {
    if (!Number.isInteger(keep) || keep < 0) {
      throw new RangeError(
        `The number of checkpoints to keep must be a whole number; got ${keep}.`,
      );
    }
    const names = await this.list();
    const removed = names.slice(0, Math.max(0, names.length - keep));
    for (const name of removed) await this.remove(name);
    return removed;
  }

  /** Destroys the client (its sockets); the instance is not used after. */
  close(): void {
    this.#client.destroy();
  }

  #key(name: string, file: string): string {
    return `${this.#prefix}${name}/${file}`;
  }

  /** Every key under `prefix`, page after page. */
  async #keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: prefix,
          MaxKeys: this.#listPageSize,
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return keys;
  }

  /** The file names of checkpoint `name` in S3; throws on a key that is no file name. */
  async #remoteFiles(name: string, doing: string): Promise<string[]> {
    const folder = `${this.#prefix}${name}/`;
    const keys = await attempt(`${doing} checkpoint "${name}" (listing its objects)`, () =>
      this.#keysUnder(folder),
    );
    const files = keys.map((key) => key.slice(folder.length));
    // A name with '/' or '..' would land outside the local folder: nothing of ours writes one.
    for (const file of files) checkName(file, `object in checkpoint "${name}"`);
    return files;
  }

  /** The regular files of a local checkpoint folder. */
  async #localFiles(folder: string): Promise<string[]> {
    const entries = await readdir(folder, { withFileTypes: true });
    const files = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
    for (const file of files) checkName(file, `file in checkpoint folder`);
    return files;
  }

  /** One file up: a single PUT when smaller than a part, else a multipart upload from the stream. */
  async #uploadFile(path: string, key: string): Promise<void> {
    const body = createReadStream(path);
    try {
      const upload = new Upload({
        client: this.#client,
        params: { Bucket: this.#bucket, Key: key, Body: body },
        partSize: this.#partSize,
        // Parts already up are discarded on failure, so that no storage is billed for them.
        leavePartsOnError: false,
      });
      await upload.done();
    } finally {
      body.destroy();
    }
  }

  async #downloadFile(key: string, path: string): Promise<void> {
    const response = await this.#client.send(
      new GetObjectCommand({ Bucket: this.#bucket, Key: key }),
    );
    if (!(response.Body instanceof Readable)) throw new Error('The object has no readable body.');
    await pipeline(response.Body, createWriteStream(path));
  }
}
