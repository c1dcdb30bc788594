import type { LiveObject } from './kubernetes-api.ts';

/** Where one replica's rollout stands, from its Deployment and pods as the API shows them. */
export type RolloutState =
  | { readonly kind: 'available' }
  | { readonly kind: 'progressing' }
  /**
   * It will not become available by waiting: the reason, and the pod and container whose log
   * says why (when a container failed).
   */
  | {
      readonly kind: 'failed';
      readonly reason: string;
      readonly pod?: string;
      readonly container?: string;
    };

interface ContainerStatus {
  name?: string;
  restartCount?: number;
  state?: {
    waiting?: { reason?: string; message?: string };
    terminated?: { exitCode?: number; reason?: string };
  };
  lastState?: { terminated?: { exitCode?: number; reason?: string } };
}

interface DeploymentStatus {
  observedGeneration?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }>;
}

/** Waiting reasons that no amount of waiting fixes: the image or the pod's configuration. */
const STUCK = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

/** A container that failed: exited non-zero (now or before a restart), or is stuck. */
function failedContainer(status: ContainerStatus): string | null {
  const waiting = status.state?.waiting?.reason;
  if (waiting && STUCK.has(waiting)) return waiting;
  const terminated = status.state?.terminated ?? status.lastState?.terminated;
  if (terminated && terminated.exitCode !== undefined && terminated.exitCode !== 0) {
    return `exited with code ${terminated.exitCode}`;
  }
  return null;
}

/** Pods of a Deployment that are not being deleted. */
export function currentPods(pods: readonly LiveObject[]): LiveObject[] {
  return pods.filter((pod) => !pod.metadata.deletionTimestamp);
}

/**
 * The replica's state: available once its Deployment has observed the latest spec and counts
 * an available pod of it; failed when the rollout passed its progress deadline or a container
 * of one of its pods failed (an init container first: the artifact fetch).
 */
export function rolloutState(deployment: LiveObject, pods: readonly LiveObject[]): RolloutState {
  const status = (deployment.status ?? {}) as DeploymentStatus;
  const observed =
    status.observedGeneration !== undefined &&
    status.observedGeneration >= (deployment.metadata.generation ?? 0);
  if (observed && (status.updatedReplicas ?? 0) >= 1 && (status.availableReplicas ?? 0) >= 1) {
    return { kind: 'available' };
  }
  for (const pod of currentPods(pods)) {
    const podStatus = (pod.status ?? {}) as {
      initContainerStatuses?: ContainerStatus[];
      containerStatuses?: ContainerStatus[];
    };
    for (const [statuses, what] of [
      [podStatus.initContainerStatuses, 'init container'],
      [podStatus.containerStatuses, 'container'],
    ] as const) {
      for (const container of statuses ?? []) {
        const failure = failedContainer(container);
        if (failure) {
          return {
            kind: 'failed',
            reason: `The ${what} ${container.name ?? ''} ${failure}.`.replace('  ', ' '),
            pod: pod.metadata.name,
            ...(container.name ? { container: container.name } : {}),
          };
        }
      }
    }
  }
  const progressing = status.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return {
      kind: 'failed',
      reason: 'The rollout exceeded its progress deadline (ProgressDeadlineExceeded).',
    };
  }
  return { kind: 'progressing' };
}

/** Whether the pod runs: scheduled, started, not being deleted. */
export function podRuns(pod: LiveObject): boolean {
  return !pod.metadata.deletionTimestamp && (pod.status as { phase?: string })?.phase === 'Running';
}

/** The pod's IP, once it has one. */
export function podIp(pod: LiveObject): string | null {
  const ip = (pod.status as { podIP?: string } | undefined)?.podIP;
  return typeof ip === 'string' && ip !== '' ? ip : null;
}
