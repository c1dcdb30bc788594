import { createHash, randomBytes } from 'node:crypto';
import type { JsonObject, StoredObject } from './object-store.ts';

/** The ownerReferences entry by which a controller's Pods name their owner. */
export function ownerReference(owner: StoredObject) {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Like the pod-template-hash label: short, stable for one template, DNS-safe. */
export function templateHash(template: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(template ?? {}))
    .digest('hex')
    .slice(0, 10);
}

/** Like the API server's generateName suffix: five lowercase letters and digits. */
export function nameSuffix(): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...randomBytes(5)].map((byte) => alphabet[byte % alphabet.length]).join('');
}

/** The Pod's owner uids (ownerReferences), to find a controller's Pods. */
export function ownedBy(object: StoredObject, uid: string): boolean {
  const references = (object.metadata.ownerReferences ?? []) as { uid?: string }[];
  return references.some((reference) => reference.uid === uid);
}

/** A Pod of the owner's `spec.template`, with extra labels, as a controller makes it. */
export function podFromTemplate(
  owner: StoredObject,
  name: string,
  labels: Readonly<Record<string, string>>,
) {
  const template = ((owner.spec as JsonObject | undefined)?.template ?? {}) as {
    metadata?: JsonObject;
    spec?: JsonObject;
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata.namespace,
      labels: { ...(template.metadata?.labels as object), ...labels },
      ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
      ownerReferences: [ownerReference(owner)],
    },
    spec: structuredClone(template.spec ?? {}),
    status: { phase: 'Pending' },
  };
}

/** The Pod's Ready condition is True and it is not being deleted. */
export function isReadyPod(pod: StoredObject): boolean {
  if (pod.metadata.deletionTimestamp !== undefined) return false;
  const conditions = ((pod.status as JsonObject | undefined)?.conditions ?? []) as {
    type?: string;
    status?: string;
  }[];
  return conditions.some((condition) => condition.type === 'Ready' && condition.status === 'True');
}
