import type { SnapshotReader } from './connector.ts';
import type { SnapshotShare } from './snapshot-share.ts';

const JOINERS = {
  mysql: () => import('./mysql/mysql-snapshot.ts'),
  postgres: () => import('./postgres/postgres-snapshot.ts'),
};

/**
 * Loads the driver a joiner of `backend` needs ahead of the share (which can come while the
 * source holds locks for it); false for a backend whose snapshots cannot be shared.
 */
export async function prepareJoin(backend: string): Promise<boolean> {
  if (backend !== 'mysql' && backend !== 'postgres') return false;
  await JOINERS[backend]();
  return true;
}

/**
 * Opens a session of its own reading the snapshot `share` came from (`SnapshotReader.share`),
 * on whatever thread calls it (`@replix/sources/join`: a load worker loads only the one
 * backend's driver it needs). The caller closes it; the sharing reader's `joined` waits for
 * nothing, so call it once every joiner has joined or failed.
 */
export async function joinSnapshot(share: SnapshotShare): Promise<SnapshotReader> {
  switch (share.backend) {
    case 'mysql':
      return (await JOINERS.mysql()).joinMySqlSnapshot(share);
    case 'postgres':
      return (await JOINERS.postgres()).joinPostgresSnapshot(share);
  }
}
