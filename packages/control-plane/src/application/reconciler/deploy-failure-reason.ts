import { sourceDialect } from '@replix/sources';
import { connectionById } from '../../adapters/store/connection-store.ts';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import type { RoleContext } from '../../roles/role.ts';
import { sourceReadiness } from '../source-access/source-readiness.ts';

/** Where the dashboard changes what these reasons name (its tab, field and button names). */
const FIX_SYNC_MODE =
  'On the Schema config tab, set Sync mode to poll and click Save changes, then click Reconfigure on the Overview tab.';

/**
 * A failed deploy in the user's words, with the setting to change: the instance only says that
 * it stopped, so the source is asked again (the connection test) and its stable answers (error
 * codes, change-log readiness) are mapped to what to do in the dashboard. When the source looks
 * fine, or cannot be asked, the instance's own reason stands.
 */
export async function deployFailureReason(
  context: Pick<RoleContext, 'db' | 'secrets' | 'log'>,
  database: DatabaseRow,
  instanceReason: string,
): Promise<string> {
  try {
    const connection = await connectionById(context.db, database.connection_id);
    if (!connection) throw new Error("The database's connection is not in the store.");
    const test = await sourceReadiness(connection, context.secrets, database.source_schema);
    const name = `“${connection.name}”`;
    const cli = (change: string, action: string) =>
      ` With the CLI: ${change}replix db ${action} ${database.id}.`;
    switch (test.errorCode) {
      case undefined:
        break;
      case 'source_auth_failed':
        return `The source refused the connection’s user or password: ${test.error} On the Connections page, edit ${name}, correct its user or password and save it, then click Reconfigure on the Overview tab.${cli(`replix connections update ${connection.id} --user <user> --password <password>, then `, 'reconfigure')}`;
      case 'source_unreachable':
      case 'source_connection_lost':
        return `Replix cannot reach the source: ${test.error} Check that the server runs and that ${name} on the Connections page has the right host and port, then click Reconfigure on the Overview tab.${cli(`replix connections update ${connection.id} --host <host> --port <port>, then `, 'reconfigure')}`;
      case 'source_database_not_found':
        return `The source has no such database: ${test.error} On the Schema config tab, choose another Source schema and click Save changes, then click Rebuild on the Overview tab.${cli(`replix databases update ${database.id} --source-schema <name>, then `, 'rebuild')}`;
      default:
        return `The source could not be read: ${test.error} Check ${name} on the Connections page, then click Reconfigure on the Overview tab.${cli('', 'reconfigure')}`;
    }
    const changeLog = test.binlog;
    if (database.sync_mode === 'cdc' && changeLog && !changeLog.ready) {
      const logName = sourceDialect(connection.backend).changeLog.name.toLowerCase();
      const why = changeLog.logBin
        ? `the source is not set up for it: ${changeLog.issues.join(' ')}`
        : `the source’s ${logName} is off, so its changes cannot be followed`;
      return `Sync mode is CDC (change data capture), but ${why}. ${FIX_SYNC_MODE} (Or change the source, then click Reconfigure.)${cli(`replix databases update ${database.id} --sync-mode poll, then `, 'reconfigure')}`;
    }
  } catch (error) {
    context.log.warn({ err: error, databaseId: database.id }, 'could not explain a failed deploy');
  }
  return instanceReason;
}
