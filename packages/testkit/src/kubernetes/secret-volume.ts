import type { Buffer } from 'node:buffer';
import { chmod, mkdir, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';

/**
 * Writes `files` into a secret volume's folder the way the kubelet does, so that a reader
 * never sees half an update: the files go into a fresh `..<time>` folder, the `..data`
 * symlink is swapped to it with one rename (atomic), and each visible name is a symlink
 * through `..data`. The previous version's folder is removed after the swap.
 */
export async function writeSecretVolume(
  dir: string,
  files: ReadonlyMap<string, Buffer>,
  mode: number,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const previous = await readlink(join(dir, '..data')).catch(() => undefined);
  const version = `..${new Date().toISOString().replace(/[:.]/g, '_')}.${process.hrtime.bigint()}`;
  await mkdir(join(dir, version));
  for (const [path, content] of files) {
    const file = join(dir, version, path);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, content);
    await chmod(file, mode);
  }
  await rm(join(dir, '..data_tmp'), { force: true });
  await symlink(version, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  const visible = new Set([...files.keys()].map((path) => path.split('/')[0] as string));
  for (const entry of await readdir(dir)) {
    if (entry.startsWith('..') || visible.has(entry)) continue;
    await rm(join(dir, entry), { force: true });
  }
  for (const name of visible) {
    await symlink(join('..data', name), join(dir, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
  if (previous !== undefined && previous !== version) {
    await rm(join(dir, previous), { recursive: true, force: true });
  }
}
