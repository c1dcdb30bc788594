import {
  ApiException,
  CoreV1Api,
  type KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
} from '@kubernetes/client-node';
import type { KubernetesObject } from './kubernetes-object.ts';

/** The field manager of everything the driver applies. */
export const FIELD_MANAGER = 'replix';

/** An object as the API server returns it: what we applied plus server-set fields. */
export interface LiveObject extends KubernetesObject {
  metadata: KubernetesObject['metadata'] & {
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
  };
  status?: Record<string, unknown>;
}

/** What names one object, for reads and deletes. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * The calls the driver makes, and only those (permissions.ts lists them): server-side apply
 * as `replix` with `force` (so fields someone else changed are taken back on every apply),
 * get, list by label (in one namespace: the driver's Roles grant nothing cluster-wide; tests
 * may omit it), delete with foreground
 * propagation, and pod logs.
 */
export class KubernetesApi {
  readonly #objects: KubernetesObjectApi;
  readonly #core: CoreV1Api;

  constructor(config: KubeConfig) {
    this.#objects = KubernetesObjectApi.makeApiClient(config);
    this.#core = config.makeApiClient(CoreV1Api);
  }

  /** Applies `object` (creating it when absent) and returns it as stored. */
  apply(object: KubernetesObject, fieldManager = FIELD_MANAGER): Promise<LiveObject> {
    return this.#objects.patch(
      object,
      undefined,
      undefined,
      fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    ) as Promise<LiveObject>;
  }

  /** The object, or null when there is none. */
  async get(ref: ObjectRef): Promise<LiveObject | null> {
    try {
      return (await this.#objects.read({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace },
      })) as LiveObject;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Objects of a kind whose labels match `labelSelector`, in `namespace` or in all of them. */
  async list(
    apiVersion: string,
    kind: string,
    labelSelector: string,
    namespace?: string,
  ): Promise<LiveObject[]> {
    const list = await this.#objects.list(
      apiVersion,
      kind,
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      labelSelector,
    );
    return list.items as LiveObject[];
  }

  /** Deletes the object and, first, what it owns (foreground); absent is fine. */
  async delete(ref: ObjectRef): Promise<void> {
    try {
      await this.#objects.delete(
        {
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          metadata: { name: ref.name, namespace: ref.namespace },
        },
        undefined,
        undefined,
        undefined,
        undefined,
        'Foreground',
      );
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /**
   * The pod's log with a timestamp on every line; `sinceSeconds` or `tailLines` bound it.
   * Empty when the pod or its container is gone or has not started.
   */
  async podLog(
    namespace: string,
    name: string,
    bounds: { container?: string; sinceSeconds?: number; tailLines?: number },
  ): Promise<string> {
    try {
      return await this.#core.readNamespacedPodLog({
        name,
        namespace,
        timestamps: true,
        ...(bounds.container ? { container: bounds.container } : {}),
        ...(bounds.sinceSeconds !== undefined ? { sinceSeconds: bounds.sinceSeconds } : {}),
        ...(bounds.tailLines !== undefined ? { tailLines: bounds.tailLines } : {}),
      });
    } catch (error) {
      if (error instanceof ApiException && (error.code === 404 || error.code === 400)) return '';
      throw error;
    }
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}
