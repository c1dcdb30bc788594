import type { InstanceLaunch } from '../instance-launch.ts';
import {
  instanceObjectName,
  instancePodSelector,
  namespaceFor,
  objectLabels,
} from './kubernetes-names.ts';
import type { KubernetesObject } from './kubernetes-object.ts';

/**
 * How an instance's replicas survive the cluster's own maintenance.
 *
 * Design note: each replica is a Deployment of one pod (instance-manifests.ts), so spreading
 * and disruption budgets select the instance's pods across its Deployments by the instance's
 * labels. Replicas spread over zones and nodes, but as a preference (`ScheduleAnyway`): a
 * one-zone cluster, or one with fewer nodes than replicas, must still run every replica, and
 * an unschedulable replica is an outage the spread was meant to prevent. A
 * PodDisruptionBudget of `maxUnavailable: 1` lets a node drain evict one replica at a time,
 * waiting for it to come back ready elsewhere before the next. A one-replica instance gets
 * none: a budget that allows no eviction would block every drain of its node, and one that
 * allows it protects nothing; its eviction costs the time its pod takes to start again
 * (docs/deploy/kubernetes.md#replicas-and-node-maintenance).
 */

/** The topology keys replicas spread over, widest first. */
export const SPREAD_TOPOLOGY_KEYS = ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'];

/** The pod template's `topologySpreadConstraints`: the instance's replicas, apart if possible. */
export function instanceSpreadConstraints(databaseId: string, instanceId: string) {
  return SPREAD_TOPOLOGY_KEYS.map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: instancePodSelector(databaseId, instanceId) },
  }));
}

/**
 * The instance's PodDisruptionBudget (named as its Service): at most one replica evicted at a
 * time; null for an instance of one replica.
 */
export function instanceDisruptionBudget(
  input: {
    readonly launch: Pick<InstanceLaunch, 'instanceId' | 'databaseId' | 'buildId'>;
    readonly accountId: string;
    readonly region: string;
    readonly replicas: number;
  },
  options: { readonly namespacePattern: string },
): KubernetesObject | null {
  if (input.replicas <= 1) return null;
  const { launch } = input;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name: instanceObjectName(launch.instanceId),
      namespace: namespaceFor(options.namespacePattern, input),
      labels: objectLabels(
        {
          accountId: input.accountId,
          databaseId: launch.databaseId,
          instanceId: launch.instanceId,
          buildId: launch.buildId,
        },
        'instance',
      ),
    },
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: instancePodSelector(launch.databaseId, launch.instanceId) },
    },
  };
}
