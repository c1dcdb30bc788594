import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { describe, expect, it } from 'vitest';
import {
  type InstanceManifestInput,
  instanceManifests,
} from '../src/adapters/drivers/kubernetes/instance-manifests.ts';
import { instanceDisruptionBudget } from '../src/adapters/drivers/kubernetes/instance-spread.ts';
import {
  instanceObjectName,
  instancePodSelector,
} from '../src/adapters/drivers/kubernetes/kubernetes-names.ts';
import { sampleLaunch } from './fixtures/sample-launch.ts';

const options = {
  image: `registry.example.com/replix/runtime@sha256:${'a'.repeat(64)}`,
  replixBin: '/app/packages/cli/bin/replix.js',
  namespacePattern: 'replix-{region}',
};

function inputOf(replicas: number): InstanceManifestInput {
  return {
    launch: sampleLaunch('xs', { replicas }),
    accountId: 'ac_1',
    region: 'eu-west-1',
    replicas,
    artifact: { kind: 'image', imageUri: 'registry.example.com/builds/bd_1:1' },
  };
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    topologySpreadConstraints: Array<{
      maxSkew: number;
      topologyKey: string;
      whenUnsatisfiable: string;
      labelSelector: { matchLabels: Record<string, string> };
    }>;
    containers: Array<{ image: string }>;
  };
}
const templates = (replicas: number) =>
  instanceManifests(inputOf(replicas), options)
    .filter((object) => object.kind === 'Deployment')
    .map((object) => (object.spec as { template: PodTemplate }).template);

describe("an instance's replicas", () => {
  it('spread over zones and nodes as a preference, each replica counting all of them', () => {
    const pods = templates(3);
    expect(pods).toHaveLength(3);
    const selector = instancePodSelector('db_1', 'in_1');
    for (const pod of pods) {
      expect(pod.spec.topologySpreadConstraints).toEqual(
        ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'].map((topologyKey) => ({
          maxSkew: 1,
          topologyKey,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector },
        })),
      );
      // The selector takes in every replica's pods, whichever Deployment made them.
      for (const other of pods) {
        expect(other.metadata.labels).toMatchObject(selector);
      }
    }
  });

  it('have a disruption budget of one eviction at a time from two replicas on', () => {
    expect(instanceDisruptionBudget(inputOf(1), options)).toBeNull();
    const budget = instanceDisruptionBudget(inputOf(2), options) as NonNullable<
      ReturnType<typeof instanceDisruptionBudget>
    >;
    expect(() =>
      new PodDisruptionBudget(structuredClone(budget) as never).validate(),
    ).not.toThrow();
    // Named as the instance's Service, beside its Deployments.
    expect(budget.metadata).toMatchObject({
      name: instanceObjectName('in_1'),
      namespace: 'replix-eu-west-1',
    });
    expect(budget.spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: instancePodSelector('db_1', 'in_1') },
    });
    // It selects exactly the instance's pods.
    for (const pod of templates(2)) {
      expect(pod.metadata.labels).toMatchObject(
        (budget.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
      );
    }
  });

  it('run the configured image reference as given, a digest included', () => {
    const fetched: InstanceManifestInput = {
      ...inputOf(1),
      artifact: {
        kind: 'fetch',
        url: 'http://api/internal/artifacts/bd_1',
        manifestSha256: 'f'.repeat(64),
        token: 't',
      },
    };
    const deployment = instanceManifests(fetched, options).find((o) => o.kind === 'Deployment');
    const pod = (deployment as unknown as { spec: { template: PodTemplate } }).spec.template;
    expect(pod.spec.containers[0]?.image).toBe(options.image);
  });
});
