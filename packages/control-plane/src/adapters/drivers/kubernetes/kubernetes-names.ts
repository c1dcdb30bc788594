import { createHash } from 'node:crypto';

/** A DNS-1123 label: what Kubernetes accepts as a namespace, Service or label-safe name. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_LABEL_MAX = 63;
/** A label value: empty, or up to 63 of `[A-Za-z0-9-_.]` starting and ending alphanumeric. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** The labels on everything Replix makes, so an operator finds it with one selector. */
export const LABELS = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  component: 'app.kubernetes.io/component',
  accountId: 'replix.dev/account-id',
  databaseId: 'replix.dev/database-id',
  instanceId: 'replix.dev/instance-id',
  buildId: 'replix.dev/build-id',
  /** A replica's ordinal (0 … replicas − 1) on its Deployment and pods. */
  replica: 'replix.dev/replica',
} as const;

/** What an object belongs to: every object carries the ids it has. */
export interface ObjectOwner {
  readonly accountId: string;
  readonly databaseId: string;
  readonly instanceId?: string;
  readonly buildId?: string;
}

const HASH_DIGITS = 8;

function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_DIGITS);
}

/**
 * `text` as a DNS label of at most `max` characters: lowercase, runs of anything else become
 * one `-`. When that loses anything (case, characters, length), a hash of the original is
 * appended, so two different ids never share a name.
 */
export function dnsLabel(text: string, max = DNS_LABEL_MAX): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug === text && slug.length <= max && DNS_LABEL.test(slug)) return slug;
  const head = slug.slice(0, max - HASH_DIGITS - 1).replace(/-+$/, '');
  return head ? `${head}-${shortHash(text)}` : shortHash(text);
}

/** `prefix-<id>` as a DNS label (the id shortened and hashed when it does not fit). */
function prefixedName(prefix: string, id: string): string {
  return `${prefix}-${dnsLabel(id, DNS_LABEL_MAX - prefix.length - 1)}`;
}

/** The database's Service and route. */
export const databaseObjectName = (databaseId: string) => prefixedName('replix-db', databaseId);
/** The instance's Service (its `privateUrl`); its replicas' Deployments add `-r<k>`. */
export const instanceObjectName = (instanceId: string) => prefixedName('replix-in', instanceId);
/** The Deployment of the instance's replica `ordinal`: a DNS label, the id shortened to fit. */
export function replicaObjectName(instanceId: string, ordinal: number): string {
  const suffix = `-r${ordinal}`;
  return `replix-in-${dnsLabel(instanceId, DNS_LABEL_MAX - 'replix-in-'.length - suffix.length)}${suffix}`;
}
/** The instance's Secret of launch secrets (source URL, key secret, SSH key, artifact token). */
export const instanceSecretName = (instanceId: string) => prefixedName('replix-env', instanceId);
/** The instance's key-set Secret, mounted as the keys file. */
export const instanceKeysName = (instanceId: string) => prefixedName('replix-keys', instanceId);
/** A build's Job. */
export const buildObjectName = (buildId: string) => prefixedName('replix-build', buildId);

/** An id as a label value (kept as is when it already is one). */
export function labelValue(id: string): string {
  return id.length <= DNS_LABEL_MAX && LABEL_VALUE.test(id) ? id : dnsLabel(id);
}

/** Labels of an object Replix made for `owner` (`component`: instance, endpoint or build). */
export function objectLabels(
  owner: ObjectOwner,
  component: 'instance' | 'endpoint' | 'build',
): Record<string, string> {
  const labels: Record<string, string> = {
    [LABELS.name]: component === 'build' ? 'replix-build' : 'replix-instance',
    [LABELS.managedBy]: 'replix',
    [LABELS.component]: component,
    [LABELS.accountId]: labelValue(owner.accountId),
    [LABELS.databaseId]: labelValue(owner.databaseId),
  };
  if (owner.instanceId !== undefined) labels[LABELS.instanceId] = labelValue(owner.instanceId);
  if (owner.buildId !== undefined) labels[LABELS.buildId] = labelValue(owner.buildId);
  return labels;
}

/** Labels of an object Replix shares between the databases of a namespace (its unrouted server). */
export function sharedLabels(component: 'unrouted'): Record<string, string> {
  return {
    [LABELS.name]: `replix-${component}`,
    [LABELS.managedBy]: 'replix',
    [LABELS.component]: component,
  };
}

/** The selector of one instance's pods (all replicas): what its Services route to. */
export function instancePodSelector(
  databaseId: string,
  instanceId: string,
): Record<string, string> {
  return {
    [LABELS.name]: 'replix-instance',
    [LABELS.managedBy]: 'replix',
    [LABELS.databaseId]: labelValue(databaseId),
    [LABELS.instanceId]: labelValue(instanceId),
  };
}

/**
 * The namespace of a region's objects, from the operator's pattern: `{region}` is replaced
 * (`replix-{region}` → `replix-eu-west-1`). The operator creates these namespaces, one per
 * region (docs/deploy/kubernetes.md#namespaces), and the driver's Roles live in them, so the
 * set must be known before any database exists: a per-account `{account}` is refused. The
 * result must be a DNS label, or the pattern is refused.
 */
export function namespaceFor(pattern: string, place: { readonly region: string }): string {
  if (pattern.includes('{account}')) {
    throw new Error(
      `The namespace pattern ${JSON.stringify(pattern)} uses {account}: namespaces are created by the operator, one per region, so only {region} may vary (docs/deploy/kubernetes.md#namespaces).`,
    );
  }
  const namespace = pattern.replaceAll('{region}', dnsLabel(place.region));
  if (namespace.length > DNS_LABEL_MAX || !DNS_LABEL.test(namespace)) {
    throw new Error(
      `The namespace pattern ${JSON.stringify(pattern)} does not give a DNS-1123 label (lowercase letters, digits and "-", at most 63).`,
    );
  }
  return namespace;
}

/** Every namespace of the regions the driver serves: the fixed set the operator creates. */
export function instanceNamespaces(pattern: string, regions: Iterable<string>): string[] {
  return [...new Set([...regions].map((region) => namespaceFor(pattern, { region })))].sort();
}

/** The selector of one replica's pods: what its Deployment owns. */
export function replicaPodSelector(
  databaseId: string,
  instanceId: string,
  ordinal: number,
): Record<string, string> {
  return { ...instancePodSelector(databaseId, instanceId), [LABELS.replica]: String(ordinal) };
}
