import { sourceDialect } from '@replix/sources';
import type { Selectable } from 'kysely';
import type { ConnectionTable } from '../../adapters/store/schema.ts';
import type { SecretBox } from '../../adapters/store/secret-box.ts';
import { splitSourceSchema } from '../../domain/source-schema-name.ts';
import { testSavedConnection } from './saved-connection-test.ts';
import type { TestConnectionResult } from './test-connection.ts';

/**
 * The connection test, run for one database of the connection: logged in to the database it
 * reads from where the engine logs in to one (PostgreSQL, SQL Server). It says whether the
 * source answers and whether it can do change data capture (`binlog.ready`).
 */
export function sourceReadiness(
  connection: Selectable<ConnectionTable>,
  secrets: SecretBox,
  sourceSchema: string,
): Promise<TestConnectionResult> {
  const loginDatabase =
    sourceDialect(connection.backend).loginDatabase === undefined
      ? undefined
      : splitSourceSchema(connection.backend, sourceSchema).database;
  return testSavedConnection(connection, secrets, loginDatabase);
}
