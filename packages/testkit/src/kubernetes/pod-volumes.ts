import type { Buffer } from 'node:buffer';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { secretOrConfigMapBytes } from './container-env.ts';
import { MountPaths } from './mount-paths.ts';
import type { JsonObject, StoredObject } from './object-store.ts';
import { writeSecretVolume } from './secret-volume.ts';

interface Volume {
  name?: string;
  emptyDir?: JsonObject;
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  persistentVolumeClaim?: { claimName?: string; readOnly?: boolean };
}

interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

interface VolumeMount {
  name?: string;
  mountPath?: string;
  subPath?: string;
}

/** A volume the pod cannot mount yet (its Secret is missing), with the kubelet's wording. */
export class VolumeNotReady extends Error {}

/**
 * A pod's volumes as local folders under `root`: `emptyDir` an empty folder, `secret` and
 * `configMap` the object's keys as files (`secret-volume.ts`), rewritten when it changes,
 * `persistentVolumeClaim` the claim's folder (`claimDir`), which every pod mounting that claim
 * shares and which outlives them. Other volume types are empty folders too.
 */
export class PodVolumes {
  readonly #root: string;
  readonly #volumes: readonly Volume[];
  readonly #lookup: (kind: 'Secret' | 'ConfigMap', name: string) => StoredObject | undefined;
  readonly #claimDir: (claimName: string) => string;
  /** Writes of one volume run one after another, so an older version never lands last. */
  readonly #writes = new Map<string, Promise<void>>();

  constructor(
    root: string,
    spec: JsonObject,
    lookup: (kind: 'Secret' | 'ConfigMap', name: string) => StoredObject | undefined,
    claimDir: (claimName: string) => string,
  ) {
    this.#root = root;
    this.#volumes = (spec.volumes ?? []) as Volume[];
    this.#lookup = lookup;
    this.#claimDir = claimDir;
  }

  /** Creates every volume; throws VolumeNotReady while a Secret or ConfigMap it needs is missing. */
  async prepare(): Promise<void> {
    for (const volume of this.#volumes) {
      const dir = this.#dirOf(volume.name ?? '');
      await mkdir(dir, { recursive: true });
      await this.#fill(volume, true);
    }
  }

  /** Rewrites the volumes that show this Secret or ConfigMap. */
  async refresh(kind: 'Secret' | 'ConfigMap', name: string): Promise<void> {
    for (const volume of this.#volumes) {
      const source = kind === 'Secret' ? volume.secret?.secretName : volume.configMap?.name;
      if (source === name) await this.#fill(volume, false);
    }
  }

  /** The container's mount paths mapped to the folders of its volumes. */
  mountsOf(container: JsonObject): MountPaths {
    const mounts = new Map<string, string>();
    for (const mount of (container.volumeMounts ?? []) as VolumeMount[]) {
      if (!mount.mountPath) continue;
      const dir = this.#dirOf(mount.name ?? '');
      mounts.set(mount.mountPath, mount.subPath ? join(dir, relativePath(mount.subPath)) : dir);
    }
    return new MountPaths(mounts);
  }

  #dirOf(name: string): string {
    const claim = this.#volumes.find((volume) => volume.name === name)?.persistentVolumeClaim;
    if (claim) return this.#claimDir(claim.claimName ?? '');
    // A prefix keeps a name such as `..` inside the pod's folder.
    return join(this.#root, `volume-${encodeURIComponent(name)}`);
  }

  #fill(volume: Volume, initial: boolean): Promise<void> {
    const source = volume.secret
      ? { kind: 'Secret' as const, name: volume.secret.secretName ?? '', ...volume.secret }
      : volume.configMap
        ? { kind: 'ConfigMap' as const, ...volume.configMap, name: volume.configMap.name ?? '' }
        : undefined;
    if (!source) return Promise.resolve();
    const object = this.#lookup(source.kind, source.name);
    if (!object) {
      if (initial && !source.optional) {
        const what = source.kind === 'Secret' ? 'secret' : 'configmap';
        throw new VolumeNotReady(
          `MountVolume.SetUp failed for volume "${volume.name}" : ${what} "${source.name}" not found`,
        );
      }
      // A deleted Secret leaves the last version in place, as on a node.
      if (!initial) return Promise.resolve();
    }
    const bytes = object ? secretOrConfigMapBytes(object) : new Map<string, Buffer>();
    const files = new Map<string, Buffer>();
    if (source.items) {
      for (const item of source.items) {
        const content = bytes.get(item.key);
        if (content !== undefined) files.set(relativePath(item.path), content);
      }
    } else {
      for (const [key, content] of bytes) files.set(relativePath(key), content);
    }
    const dir = this.#dirOf(volume.name ?? '');
    const previous = this.#writes.get(dir) ?? Promise.resolve();
    const write = previous.then(() => writeSecretVolume(dir, files, source.defaultMode ?? 0o644));
    this.#writes.set(
      dir,
      write.catch(() => {}),
    );
    return write;
  }
}

/** A path inside a volume: relative, without `..` (nor the `..data` names), as the API server validates it. */
function relativePath(path: string): string {
  if (
    path === '' ||
    path.startsWith('/') ||
    path.startsWith('..') ||
    path.split('/').includes('..')
  ) {
    throw new VolumeNotReady(
      `the path ${JSON.stringify(path)} must be relative and not contain '..'`,
    );
  }
  return path;
}
