import { endpointsToRestore, recordEndpoint } from '../../adapters/store/database-store.ts';
import { recordEndpointUrl } from '../../adapters/store/instance-store.ts';
import { unroutedMessage } from '../../domain/endpoint-messages.ts';
import type { RoleContext } from '../../roles/role.ts';

/**
 * Reconciler start-up: opens every database's endpoint again on its own port (the addresses
 * survive control-plane restarts) and points it at the database's serving instance when that
 * runs (adopted); otherwise it answers 503 until the instance is started again. A database
 * deployed before endpoints existed gets its endpoint now. Failures are logged per database.
 */
export async function restoreEndpoints(context: RoleContext): Promise<void> {
  const { db, driver, log } = context;
  const databases = await endpointsToRestore(db);
  for (const row of databases) {
    try {
      const endpoint = await driver.openEndpoint(row.databaseId, row.endpointPort);
      if (endpoint.port !== row.endpointPort || endpoint.url !== row.endpointUrl) {
        await recordEndpoint(db, row.databaseId, endpoint);
        await recordEndpointUrl(db, row.databaseId, endpoint.url);
      }
      if (row.instanceId && (await driver.isAlive(row.instanceId))) {
        await driver.route(row.databaseId, row.instanceId);
      } else {
        await driver.unroute(row.databaseId, unroutedMessage(row.status));
      }
    } catch (error) {
      log.warn({ err: error, databaseId: row.databaseId }, 'could not open the endpoint');
    }
  }
}
