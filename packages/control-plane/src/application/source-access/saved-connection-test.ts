import type { SourceBackend, SourceTlsMode } from '@replix/sources';
import type { Selectable } from 'kysely';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { sourcePassword } from './source-password.ts';
import { type TestConnectionResult, testConnection } from './test-connection.ts';

/**
 * Tests a saved connection exactly as the raw connection test does, with its stored settings:
 * host, port, user, TLS mode and SSH tunnel, the sealed password and key opened only here.
 * `database` is the login database the raw test takes (PostgreSQL, SQL Server).
 */
export function testSavedConnection(
  connection: Selectable<ConnectionTable>,
  secrets: SecretBox,
  database: string | undefined,
): Promise<TestConnectionResult> {
  // As `connectionTarget` does: a tunnel needs both its settings and its key.
  const ssh =
    connection.ssh && connection.ssh_private_key_enc
      ? {
          host: connection.ssh.host,
          port: connection.ssh.port,
          user: connection.ssh.user,
          privateKey: secrets.open(connection.ssh_private_key_enc),
        }
      : undefined;
  return testConnection({
    backend: connection.backend as SourceBackend,
    host: connection.host,
    port: connection.port,
    user: connection.username,
    password: sourcePassword(connection, secrets),
    database,
    tlsMode: connection.tls_mode as SourceTlsMode,
    ssh,
  });
}
