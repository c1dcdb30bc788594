import type { Driver } from './driver.ts';

/** What the store keeps of an instance's addresses. */
export interface InstanceAddresses {
  readonly private_url: string | null;
  readonly replica_urls: ReadonlyArray<string | null> | null;
}

/**
 * The private addresses of an instance's replicas the control plane calls (health, metrics,
 * admin fan-out): each replica's, by ordinal, leaving out those without one; an instance
 * recorded before replicas has only its `private_url`.
 */
export function replicaUrlsOf(instance: InstanceAddresses): string[] {
  const urls = (instance.replica_urls ?? []).filter(
    (url): url is string => typeof url === 'string',
  );
  if (urls.length > 0) return urls;
  return instance.private_url ? [instance.private_url] : [];
}

/** The replicas' addresses as the driver reports them now, for the store (`replica_urls`). */
export async function currentReplicaUrls(
  driver: Pick<Driver, 'replicas'>,
  instanceId: string,
): Promise<Array<string | null>> {
  return (await driver.replicas(instanceId)).map((replica) => replica.url);
}
