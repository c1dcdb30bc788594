import type { SourceEngine, SourceTlsMode } from '@replix/sources';
import type { Selectable } from 'kysely';
import { iso } from '../api/common-schemas.ts';
import type { ConnectionTable } from '../store/schema.ts';
import type { Region } from './regions.ts';

/** The API view of a connection: secrets are reported as present, never returned. */
export function connectionResource(row: Selectable<ConnectionTable>) {
  return {
    id: row.id,
    name: row.name,
    backend: row.backend as SourceEngine,
    host: row.host,
    port: row.port,
    user: row.username,
    hasPassword: true,
    defaultRegion: row.default_region as Region,
    tlsMode: row.tls_mode as SourceTlsMode,
    ssh: row.ssh
      ? {
          host: row.ssh.host,
          port: row.ssh.port,
          user: row.ssh.user,
          hasPrivateKey: row.ssh_private_key_enc !== null,
        }
      : null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
