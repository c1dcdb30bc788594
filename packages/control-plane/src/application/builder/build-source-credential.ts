import type { BuildCredentialSource } from '../../adapters/drivers/kubernetes/build-credential.ts';
import { connectionById } from '../../adapters/store/connection-store.ts';
import { databaseById } from '../../adapters/store/database-store.ts';
import type { StoreDb } from '../../adapters/store/open-store.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { connectionTarget } from '../source-access/connection-target.ts';

/**
 * The source credential of a build: its database's connection opened for the database's
 * source schema (the URL the in-process builder would connect with), or why there is none.
 * Only the builder, which holds the secret key, opens it; a build Job gets the result.
 */
export function credentialFromStore(db: StoreDb, secrets: SecretBox): BuildCredentialSource {
  return async (build) => {
    const database = await databaseById(db, build.database_id);
    if (!database || database.deleted_at) return 'The database was deleted.';
    const connection = await connectionById(db, database.connection_id);
    if (!connection || connection.deleted_at) return "The database's connection was deleted.";
    const target = connectionTarget(connection, secrets, database.source_schema);
    return { sourceUrl: target.sourceUrl, sshPrivateKey: target.ssh?.privateKey };
  };
}
