/**
 * A container's view of its volumes. Processes of the local kubelet cannot mount anything at
 * an absolute path, so each `volumeMounts[].mountPath` stands for a local folder, and the
 * kubelet rewrites that path where a container names it: in `command`, `args`, `workingDir`
 * and env values. A mount path is rewritten where it stands as a whole path or a path's
 * start (`/etc/keys`, `/etc/keys/keys.json`), not inside a longer name (`/etc/keys2`,
 * `/var/etc/keys`); the longest mount path wins.
 */
export class MountPaths {
  readonly #targets: ReadonlyMap<string, string>;
  readonly #pattern: RegExp | undefined;

  /** `mounts`: mount path → local folder. */
  constructor(mounts: ReadonlyMap<string, string>) {
    const targets = new Map<string, string>();
    for (const [mountPath, local] of mounts) targets.set(trimSlash(mountPath), local);
    this.#targets = targets;
    const paths = [...targets.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#pattern =
      paths.length === 0
        ? undefined
        : new RegExp(`(?<![\\w./-])(${paths.join('|')})(?![\\w.-])`, 'g');
  }

  rewrite(text: string): string {
    if (!this.#pattern) return text;
    return text.replace(this.#pattern, (path) => this.#targets.get(path) as string);
  }
}

function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
