import { Buffer } from 'node:buffer';
/** The metadata Replix sets on the objects it applies. */
export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * A manifest as server-side apply takes it: plain JSON, no status, no server-set fields, so
 * the same input always serializes to the same bytes.
 */
export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Base64 of UTF-8 text, as a Secret's `data` holds it. */
export function secretData(entries: Record<string, string>): Record<string, string> {
  const data: Record<string, string> = {};
  for (const key of Object.keys(entries).sort()) {
    data[key] = Buffer.from(entries[key] as string, 'utf8').toString('base64');
  }
  return data;
}

/**
 * `object` owned by `owner` (an applied object, whose uid the API server gave it): deleting
 * the owner deletes it too.
 */
export function ownedBy<T extends KubernetesObject>(
  object: T,
  owner: { apiVersion: string; kind: string; name: string; uid: string },
): T {
  const reference: OwnerReference = {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.name,
    uid: owner.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
  return { ...object, metadata: { ...object.metadata, ownerReferences: [reference] } };
}
