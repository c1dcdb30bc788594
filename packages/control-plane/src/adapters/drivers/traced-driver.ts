import { inSpan } from '@replix/runtime/tracing';
import type { Driver } from './driver.ts';

/**
 * `driver` with a span around each call that changes what runs (`driver.start`, `driver.route`,
 * …), so a deploy's trace shows where its time went and the health checks a start makes join
 * it. The reads polled in loops (`isAlive`, `replicas`, `readLogs`) get none. Made only when
 * tracing is on (`createDriver`).
 */
export function tracedDriver(driver: Driver): Driver {
  const traced = <T>(method: string, attributes: Record<string, string>, call: () => Promise<T>) =>
    inSpan(`driver.${method}`, { 'replix.driver': driver.name, ...attributes }, call);
  const instance = (instanceId: string) => ({ 'replix.instance.id': instanceId });
  const database = (databaseId: string) => ({ 'replix.database.id': databaseId });
  return {
    name: driver.name,
    start: (launch) =>
      traced(
        'start',
        { ...instance(launch.instanceId), 'replix.replicas': String(launch.replicas) },
        () => driver.start(launch),
      ),
    openEndpoint: (databaseId, port) =>
      traced('openEndpoint', database(databaseId), () => driver.openEndpoint(databaseId, port)),
    route: (databaseId, instanceId) =>
      traced('route', { ...database(databaseId), ...instance(instanceId) }, () =>
        driver.route(databaseId, instanceId),
      ),
    unroute: (databaseId, message) =>
      traced('unroute', database(databaseId), () => driver.unroute(databaseId, message)),
    closeEndpoint: (databaseId) =>
      traced('closeEndpoint', database(databaseId), () => driver.closeEndpoint(databaseId)),
    dropCheckpoints: (databaseId) =>
      traced('dropCheckpoints', database(databaseId), () => driver.dropCheckpoints(databaseId)),
    stop: (instanceId) => traced('stop', instance(instanceId), () => driver.stop(instanceId)),
    updateKeys: (instanceId, keys) =>
      traced('updateKeys', instance(instanceId), () => driver.updateKeys(instanceId, keys)),
    isAlive: (instanceId) => driver.isAlive(instanceId),
    replicas: (instanceId) => driver.replicas(instanceId),
    readLogs: (instanceId, token) => driver.readLogs(instanceId, token),
    shutdown: () => driver.shutdown(),
    ...(driver.reapOrphans ? { reapOrphans: driver.reapOrphans.bind(driver) } : {}),
  };
}
