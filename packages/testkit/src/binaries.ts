import { accessSync, constants, readdirSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

/** Thrown when a database server binary is not installed; names the Debian packages to add. */
export class MissingBinaryError extends Error {
  constructor(binary: string, debianPackages: string) {
    super(
      `${binary} was not found. Install it with: apt-get update && apt-get install -y ${debianPackages}`,
    );
    this.name = 'MissingBinaryError';
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findOnPath(name: string, extraDirs: string[]): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), ...extraDirs].filter(Boolean);
  return dirs.map((dir) => join(dir, name)).find(isExecutable);
}

/** Debian puts PostgreSQL's server binaries in a versioned folder that is not on PATH. */
export function postgresBinDirs(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql')
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => `/usr/lib/postgresql/${version}/bin`);
  } catch {
    return [];
  }
}

export interface MariaDbBinaries {
  server: string;
  installDb: string;
}

export function mariaDbBinaries(): MariaDbBinaries {
  const dirs = ['/usr/sbin', '/usr/bin'];
  const server = findOnPath('mariadbd', dirs) ?? findOnPath('mysqld', dirs);
  const installDb = findOnPath('mariadb-install-db', dirs) ?? findOnPath('mysql_install_db', dirs);
  if (!server) throw new MissingBinaryError('mariadbd', 'mariadb-server');
  if (!installDb) throw new MissingBinaryError('mariadb-install-db', 'mariadb-server');
  return { server, installDb };
}

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

export function postgresBinaries(): PostgresBinaries {
  // Prefer the versioned Debian folder so initdb and postgres always come from one release.
  const dirs = postgresBinDirs();
  const inDebianDir = dirs.find((dir) => isExecutable(join(dir, 'postgres')));
  const initdb = inDebianDir ? join(inDebianDir, 'initdb') : findOnPath('initdb', []);
  const postgres = inDebianDir ? join(inDebianDir, 'postgres') : findOnPath('postgres', []);
  if (!initdb || !postgres) throw new MissingBinaryError('postgres/initdb', 'postgresql');
  return { initdb, postgres };
}
