import { existsSync } from 'node:fs';

/**
 * A container's view of its volumes. Processes of the local kubelet cannot mount anything at
 * an absolute path, so each `volumeMounts[].mountPath` stands for a local folder, and the
 * kubelet rewrites that path where a container names it: in `command`, `args`, `workingDir`
 * and env values. A mount path is rewritten where it stands as a whole path or a path's
 * start (`/etc/keys`, `/etc/keys/keys.json`), not inside a longer name (`/etc/keys2`,
 * `/var/etc/keys`); the longest mount path wins. A path under a mount path that names a file
 * this machine already has is left alone: the pods' image is this machine's file system, and
 * the checkout whose programs they run may itself live under a mounted path (a clone in /tmp,
 * where the instance mounts an emptyDir).
 */
export class MountPaths {
  readonly #targets: ReadonlyMap<string, string>;
  readonly #pattern: RegExp | undefined;

  readonly #exists: (path: string) => boolean;

  /** `mounts`: mount path → local folder; `exists` tells a file of this machine (tests stub it). */
  constructor(mounts: ReadonlyMap<string, string>, exists: (path: string) => boolean = existsSync) {
    this.#exists = exists;
    const targets = new Map<string, string>();
    for (const [mountPath, local] of mounts) targets.set(trimSlash(mountPath), local);
    this.#targets = targets;
    const paths = [...targets.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#pattern =
      paths.length === 0
        ? undefined
        : new RegExp(`(?<![\\w./-])(${paths.join('|')})(?![\\w.-])((?:/[\\w.@+-]+)*)`, 'g');
  }

  rewrite(text: string): string {
    if (!this.#pattern) return text;
    return text.replace(this.#pattern, (whole, mountPath: string, rest: string) =>
      rest && this.#exists(whole) ? whole : (this.#targets.get(mountPath) as string) + rest,
    );
  }
}

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
