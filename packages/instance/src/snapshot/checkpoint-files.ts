import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeGeneration, encodeGeneration, type SharedGeneration } from '@replix/engine';

/**
 * A checkpoint on disk: one generation of the snapshot and what it corresponds to, in a
 * folder of its own under a checkpoint folder (`Checkpointer` writes them and starts from them).
 *
 *     <dir>/<name>/structure.json   the generation's structure (engine's generation codec)
 *     <dir>/<name>/buffers.bin      its buffers, back to back, each at a multiple of 8 bytes
 *     <dir>/<name>/manifest.json    format, fingerprint, position, buffer table, each file's
 *                                   size and sha256: written last, so a folder without it is
 *                                   one whose writing did not finish
 *
 * A folder is written as `<name>.partial` and renamed when whole. Reading checks the format,
 * the fingerprint, then every file's size and sha256 before decoding anything.
 */

/** The layout above; a checkpoint of another format is not read. */
export const CHECKPOINT_FORMAT = 1;

const STRUCTURE_FILE = 'structure.json';
const BUFFERS_FILE = 'buffers.bin';
const MANIFEST_FILE = 'manifest.json';
const PARTIAL = '.partial';
const ALIGNMENT = 8;
/** Bytes hashed and written (or read) in one step. */
const SLICE_BYTES = 1024 * 1024;

/** What a checkpoint is of: the schema config it was built under, and where the source was. */
export interface CheckpointOf {
  /** The schema config's fingerprint: a checkpoint of another config is not used. */
  readonly fingerprint: string;
  /** The replication position its generation corresponds to, as the connector writes it. */
  readonly position: string | null;
}

export interface CheckpointManifest extends CheckpointOf {
  readonly format: number;
  readonly generationId: number;
  readonly writtenAt: string;
  /** Where each buffer of the generation is in `buffers.bin`. */
  readonly buffers: readonly { readonly offset: number; readonly bytes: number }[];
  readonly files: Readonly<Record<string, { readonly bytes: number; readonly sha256: string }>>;
}

export type CheckpointProblem = 'unfinished' | 'format' | 'fingerprint' | 'damaged';

/** Why a checkpoint cannot be used. */
export class CheckpointError extends Error {
  readonly problem: CheckpointProblem;

  constructor(problem: CheckpointProblem, message: string) {
    super(message);
    this.name = 'CheckpointError';
    this.problem = problem;
  }
}

/** The time in the newest name given: two writes in one millisecond still sort in order. */
let lastStamp = 0;

function padding(offset: number): number {
  return (ALIGNMENT - (offset % ALIGNMENT)) % ALIGNMENT;
}

/**
 * Writes `generation` as a checkpoint under `dir`; the name of its folder. The buffers are
 * written from the generation's own memory, one after another: what it holds beyond them is
 * its structure's text.
 */
export async function writeCheckpoint(
  dir: string,
  generation: SharedGeneration,
  of: CheckpointOf,
  pace: { readonly bytesPerSecond?: number } = {},
): Promise<string> {
  // Named by time, so the newest sorts last whatever its generation's number (a start from
  // the source numbers generations from 1 again).
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  const name = `${String(lastStamp).padStart(15, '0')}-${generation.id}`;
  const partial = join(dir, `${name}${PARTIAL}`);
  await mkdir(partial, { recursive: true });
  try {
    const { structure, buffers } = encodeGeneration(generation);
    await writeFile(join(partial, STRUCTURE_FILE), structure);
    const files: Record<string, { bytes: number; sha256: string }> = {
      [STRUCTURE_FILE]: {
        bytes: Buffer.byteLength(structure),
        sha256: createHash('sha256').update(structure).digest('hex'),
      },
    };
    const table: { offset: number; bytes: number }[] = [];
    const hash = createHash('sha256');
    const file = await open(join(partial, BUFFERS_FILE), 'w');
    let offset = 0;
    const started = performance.now();
    let written = 0;
    try {
      for (const bytes of buffers) {
        const gap = padding(offset);
        if (gap > 0) {
          const zeros = new Uint8Array(gap);
          hash.update(zeros);
          await file.write(zeros);
          offset += gap;
        }
        table.push({ offset, bytes: bytes.byteLength });
        // A slice at a time, each write yielding: hashing stays a short step between requests.
        for (let at = 0; at < bytes.byteLength; at += SLICE_BYTES) {
          const slice = bytes.subarray(at, Math.min(at + SLICE_BYTES, bytes.byteLength));
          hash.update(slice);
          await file.write(slice);
          written += slice.byteLength;
          // Paced: ahead of `bytesPerSecond`, wait until the pace catches up.
          if (pace.bytesPerSecond !== undefined) {
            const due = (written / pace.bytesPerSecond) * 1000 - (performance.now() - started);
            if (due > 1) await sleep(due);
          }
        }
        offset += bytes.byteLength;
      }
      await file.sync();
    } finally {
      await file.close();
    }
    files[BUFFERS_FILE] = { bytes: offset, sha256: hash.digest('hex') };
    const manifest: CheckpointManifest = {
      format: CHECKPOINT_FORMAT,
      fingerprint: of.fingerprint,
      position: of.position,
      generationId: generation.id,
      writtenAt: new Date().toISOString(),
      buffers: table,
      files,
    };
    await writeFile(join(partial, MANIFEST_FILE), JSON.stringify(manifest));
    await rename(partial, join(dir, name));
    return name;
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    throw error;
  }
}

async function readManifest(folder: string): Promise<CheckpointManifest> {
  let text: string;
  try {
    text = await readFile(join(folder, MANIFEST_FILE), 'utf8');
  } catch {
    throw new CheckpointError('unfinished', 'The checkpoint has no manifest.');
  }
  try {
    return JSON.parse(text) as CheckpointManifest;
  } catch {
    throw new CheckpointError('damaged', 'The checkpoint manifest is not JSON.');
  }
}

/** A checked file's bytes: its size and sha256 are the manifest's. */
async function checkedFile(
  folder: string,
  name: string,
  manifest: CheckpointManifest,
): Promise<Buffer> {
  const expected = manifest.files?.[name];
  if (!expected) throw new CheckpointError('damaged', `The manifest does not list ${name}.`);
  const size = (await stat(join(folder, name)).catch(() => undefined))?.size;
  if (size !== expected.bytes) {
    throw new CheckpointError(
      'damaged',
      `${name} has ${size ?? 'no'} bytes; the manifest says ${expected.bytes}.`,
    );
  }
  const bytes = await readFile(join(folder, name));
  if (createHash('sha256').update(bytes).digest('hex') !== expected.sha256) {
    throw new CheckpointError('damaged', `${name} does not match its checksum.`);
  }
  return bytes;
}

/**
 * The buffers of `buffers.bin`, each read into a SharedArrayBuffer of its own (which the
 * decoded generation then uses as it is: no second copy), the file's size and sha256 checked
 * against the manifest as it is read.
 */
async function readBuffers(
  folder: string,
  manifest: CheckpointManifest,
): Promise<Uint8Array<SharedArrayBuffer>[]> {
  const expected = manifest.files?.[BUFFERS_FILE];
  if (!expected || !Array.isArray(manifest.buffers)) {
    throw new CheckpointError('damaged', `The manifest does not list ${BUFFERS_FILE}.`);
  }
  const file = await open(join(folder, BUFFERS_FILE), 'r').catch(() => undefined);
  if (!file) throw new CheckpointError('damaged', `${BUFFERS_FILE} is missing.`);
  try {
    const { size } = await file.stat();
    if (size !== expected.bytes) {
      throw new CheckpointError(
        'damaged',
        `${BUFFERS_FILE} has ${size} bytes; the manifest says ${expected.bytes}.`,
      );
    }
    const hash = createHash('sha256');
    const buffers: Uint8Array<SharedArrayBuffer>[] = [];
    let position = 0;
    const readInto = async (target: Uint8Array) => {
      for (let at = 0; at < target.byteLength; at += SLICE_BYTES) {
        const slice = target.subarray(at, Math.min(at + SLICE_BYTES, target.byteLength));
        const { bytesRead } = await file.read(slice, 0, slice.byteLength, position);
        if (bytesRead !== slice.byteLength) {
          throw new CheckpointError('damaged', `${BUFFERS_FILE} ends early.`);
        }
        hash.update(slice);
        position += bytesRead;
      }
    };
    for (const { offset, bytes } of manifest.buffers) {
      const gap = offset - position;
      if (!Number.isSafeInteger(bytes) || bytes < 0 || gap < 0 || gap >= ALIGNMENT) {
        throw new CheckpointError('damaged', 'The buffer table does not match buffers.bin.');
      }
      if (offset + bytes > size) {
        throw new CheckpointError('damaged', 'A buffer lies beyond the end of buffers.bin.');
      }
      if (gap > 0) await readInto(new Uint8Array(gap));
      const buffer = new Uint8Array(new SharedArrayBuffer(bytes));
      await readInto(buffer);
      buffers.push(buffer);
    }
    if (position !== size) {
      throw new CheckpointError('damaged', `${BUFFERS_FILE} holds bytes no buffer accounts for.`);
    }
    if (hash.digest('hex') !== expected.sha256) {
      throw new CheckpointError('damaged', `${BUFFERS_FILE} does not match its checksum.`);
    }
    return buffers;
  } finally {
    await file.close();
  }
}

/**
 * The checkpoint in `folder`, if it is whole and of `fingerprint`: its manifest and its
 * generation. Throws `CheckpointError` saying why not.
 */
export async function readCheckpoint(
  folder: string,
  fingerprint: string,
): Promise<{ manifest: CheckpointManifest; generation: SharedGeneration }> {
  const manifest = await readManifest(folder);
  if (manifest.format !== CHECKPOINT_FORMAT) {
    throw new CheckpointError(
      'format',
      `The checkpoint is of format ${manifest.format}; this instance reads ${CHECKPOINT_FORMAT}.`,
    );
  }
  if (manifest.fingerprint !== fingerprint) {
    throw new CheckpointError('fingerprint', 'The checkpoint is of another schema config.');
  }
  const structure = await checkedFile(folder, STRUCTURE_FILE, manifest);
  const buffers = await readBuffers(folder, manifest);
  try {
    return { manifest, generation: decodeGeneration(structure.toString('utf8'), buffers) };
  } catch (error) {
    throw new CheckpointError('damaged', `The checkpoint does not decode: ${String(error)}`);
  }
}

/**
 * The newest usable checkpoint under `dir` for `fingerprint`, and why each newer one was not
 * used (what the start logs when it falls back); undefined when none is usable.
 */
export async function newestCheckpoint(
  dir: string,
  fingerprint: string,
): Promise<{
  checkpoint: (Awaited<ReturnType<typeof readCheckpoint>> & { name: string }) | undefined;
  skipped: { name: string; error: CheckpointError }[];
}> {
  const names = (await readdir(dir).catch(() => [] as string[]))
    .filter((name) => !name.endsWith(PARTIAL))
    .sort()
    .reverse();
  const skipped: { name: string; error: CheckpointError }[] = [];
  for (const name of names) {
    try {
      const checkpoint = await readCheckpoint(join(dir, name), fingerprint);
      return { checkpoint: { ...checkpoint, name }, skipped };
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      skipped.push({ name, error });
    }
  }
  return { checkpoint: undefined, skipped };
}

/** An unfinished write untouched this long was cut short (its writer stopped or died). */
const ABANDONED_MS = 10 * 60_000;

/**
 * Keeps the newest `keep` checkpoints under `dir` (the newest, and one to fall back to) and
 * removes the others and any abandoned unfinished write; the names removed. An unfinished write
 * touched lately is left alone: during a deploy the old instance and the new one both write
 * into their database's folder.
 */
export async function pruneCheckpoints(dir: string, keep: number): Promise<string[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  const whole = names.filter((name) => !name.endsWith(PARTIAL));
  const abandoned: string[] = [];
  for (const name of names.filter((entry) => entry.endsWith(PARTIAL))) {
    if (await untouchedFor(join(dir, name), ABANDONED_MS)) abandoned.push(name);
  }
  const removed = [...abandoned, ...whole.slice(0, Math.max(0, whole.length - keep))];
  for (const name of removed) await rm(join(dir, name), { recursive: true, force: true });
  return removed;
}

/** Whether nothing in `folder` (nor the folder) changed for `ms`. */
async function untouchedFor(folder: string, ms: number): Promise<boolean> {
  const entries = await readdir(folder).catch(() => [] as string[]);
  const times = await Promise.all(
    [folder, ...entries.map((entry) => join(folder, entry))].map((path) =>
      stat(path).then(
        (info) => info.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Date.now() - Math.max(...times) > ms;
}
