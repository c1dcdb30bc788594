import { randomBytes } from 'node:crypto';
import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { type FakeKubernetes, startFakeKubernetes } from '@replix/testkit';
import pino from 'pino';
import { afterAll, beforeAll, expect } from 'vitest';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import type { KubernetesDriver } from '../src/adapters/drivers/kubernetes/kubernetes-driver.ts';
import { kubernetesDriverOf } from '../src/adapters/drivers/kubernetes/kubernetes-setup.ts';
import { artifactFile } from '../src/application/builder/artifact-files.ts';
import { runDriverContract } from './driver-contract.ts';
import {
  apiCallsOf,
  callsNotGranted,
  createOperatorNamespaces,
  killReplica,
  REPLIX_BIN,
  throughGateway,
} from './kubernetes-test-cluster.ts';

// The driver contract against the fake API server in its runPods mode: pods run as local
// processes (the real `replix serve` of this checkout, its artifact fetched by the real init
// container script from the real artifact endpoint), Services get loopback cluster IPs, and
// the fake's gateway routes endpoint hosts.

let fake: FakeKubernetes;
let artifactServer: Server;
let artifactUrl: string;
const secretKey = randomBytes(32);
/** The artifact folder of each build the driver launched, as the store would answer it. */
const artifactDirs = new Map<string, string>();
const keepAlive = new Agent({ keepAlive: true });
/** Requests before this index are the operator's set-up (the namespace), not the driver's. */
let firstDriverRequest = 0;

beforeAll(async () => {
  fake = await startFakeKubernetes({ runPods: true, probeIntervalMs: 100 });
  await createOperatorNamespaces(fake.kubeconfig);
  firstDriverRequest = fake.requests.length;
  artifactServer = createServer((request, response) => {
    const match = /^\/internal\/artifacts\/([^/]+)\/([^/]+)$/.exec(request.url ?? '');
    if (!match) {
      response.writeHead(404).end();
      return;
    }
    void artifactFile(
      { secretKey, artifactDirOf: async (buildId) => artifactDirs.get(buildId) ?? null },
      decodeURIComponent(match[1] as string),
      decodeURIComponent(match[2] as string),
      request.headers.authorization,
    ).then((answer) => {
      if (answer.kind === 'file') response.writeHead(200).end(answer.bytes);
      else response.writeHead(answer.kind === 'unauthorized' ? 401 : 404).end();
    });
  });
  await new Promise<void>((resolve) => artifactServer.listen(0, '127.0.0.1', resolve));
  artifactUrl = `http://127.0.0.1:${(artifactServer.address() as AddressInfo).port}`;
});

afterAll(async () => {
  keepAlive.destroy();
  // Every call the contract made (HTTPRoute endpoints included) is one the namespaced RBAC
  // rules grant: none cluster-wide.
  if (fake)
    expect(callsNotGranted(apiCallsOf(fake.requests.slice(firstDriverRequest)))).toEqual([]);
  await fake?.close();
  await new Promise((resolve) => artifactServer?.close(resolve));
});

function makeDriver(): KubernetesDriver {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(fake.kubeconfig);
  const driver = kubernetesDriverOf(
    {
      image: 'replix-runtime:test',
      replixBin: REPLIX_BIN,
      namespacePattern: 'replix-{region}',
      hostPatterns: { 'eu-west-1': '{database}.eu-west-1.db.test' },
      route: { kind: 'httproute', gateway: { namespace: 'replix-system', name: 'replix' } },
      endpointScheme: 'http',
      artifactUrl,
    },
    {
      kubeConfig,
      log: pino({ level: 'silent' }),
      secretKey,
      placeOf: async () => ({ accountId: 'ac-contract', region: 'eu-west-1' }),
    },
  );
  // The store's answer for the artifact endpoint: where each launched build lives.
  const start = driver.start.bind(driver);
  driver.start = (launch: InstanceLaunch) => {
    artifactDirs.set(launch.buildId, launch.artifactDir);
    return start(launch);
  };
  return driver;
}

runDriverContract('kubernetes', makeDriver, {
  // The instances and endpoints live in the cluster: a control plane's crash takes nothing.
  crash: async () => {},
  request: (url, headers) => throughGateway(fake.gatewayUrl as string, url, headers, keepAlive),
  closedEndpointStatus: 404,
  killReplica: (_driver, instanceId, ordinal) => killReplica(fake.kubeconfig, instanceId, ordinal),
});
