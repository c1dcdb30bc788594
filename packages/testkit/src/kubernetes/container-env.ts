import { Buffer } from 'node:buffer';
import type { JsonObject, StoredObject } from './object-store.ts';

/** A container the kubelet cannot start with its configuration as it is (a missing Secret key). */
export class ContainerConfigError extends Error {}

/** What `fieldRef` can name of the Pod. */
export interface PodFields {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly podIP: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** Finds a Secret or ConfigMap of the Pod's namespace. */
export type ObjectLookup = (kind: 'Secret' | 'ConfigMap', name: string) => StoredObject | undefined;

interface KeyRef {
  name?: string;
  key?: string;
  optional?: boolean;
}

interface EnvVar {
  name?: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: KeyRef;
    configMapKeyRef?: KeyRef;
    fieldRef?: { fieldPath?: string };
  };
}

interface EnvFrom {
  prefix?: string;
  secretRef?: { name?: string; optional?: boolean };
  configMapRef?: { name?: string; optional?: boolean };
}

/**
 * The container's environment from `envFrom` and `env`, in the API's order (later wins):
 * literals with `$(NAME)` references to earlier variables expanded, Secret and ConfigMap keys
 * (a Secret's `data` base64-decoded), and the Pod's own fields.
 */
export function containerEnvironment(
  container: JsonObject,
  pod: PodFields,
  lookup: ObjectLookup,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of (container.envFrom ?? []) as EnvFrom[]) {
    const [kind, ref] = source.secretRef
      ? (['Secret', source.secretRef] as const)
      : (['ConfigMap', source.configMapRef ?? {}] as const);
    const object = lookup(kind, ref.name ?? '');
    if (!object) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
    }
    for (const [key, value] of Object.entries(valuesOf(object)))
      env[`${source.prefix ?? ''}${key}`] = value;
  }
  for (const variable of (container.env ?? []) as EnvVar[]) {
    if (!variable.name) continue;
    const value = variable.valueFrom
      ? valueFrom(variable.valueFrom, pod, lookup)
      : expandReferences(variable.value ?? '', env);
    if (value !== undefined) env[variable.name] = value;
  }
  return env;
}

/** `$(NAME)` replaced by the variable when it is defined; `$$(NAME)` is a literal `$(NAME)`. */
export function expandReferences(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name?: string) => {
    if (match === '$$') return '$';
    return name !== undefined && env[name] !== undefined ? env[name] : match;
  });
}

function valueFrom(
  source: NonNullable<EnvVar['valueFrom']>,
  pod: PodFields,
  lookup: ObjectLookup,
): string | undefined {
  if (source.fieldRef) return fieldValue(source.fieldRef.fieldPath ?? '', pod);
  const [kind, ref] = source.secretKeyRef
    ? (['Secret', source.secretKeyRef] as const)
    : (['ConfigMap', source.configMapKeyRef ?? {}] as const);
  const object = lookup(kind, ref.name ?? '');
  if (!object) {
    if (ref.optional) return undefined;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
  }
  const value = valuesOf(object)[ref.key ?? ''];
  if (value === undefined && !ref.optional) {
    throw new ContainerConfigError(
      `couldn't find key ${ref.key} in ${kind} ${pod.namespace}/${ref.name}`,
    );
  }
  return value;
}

function fieldValue(path: string, pod: PodFields): string {
  if (path === 'metadata.name') return pod.name;
  if (path === 'metadata.namespace') return pod.namespace;
  if (path === 'metadata.uid') return pod.uid;
  if (path === 'status.podIP') return pod.podIP;
  if (path === 'status.hostIP' || path === 'status.hostIPs') return '127.0.0.1';
  if (path === 'spec.nodeName') return 'replix-fake-node';
  const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
  if (label) return pod.labels[label[1] as string] ?? '';
  throw new ContainerConfigError(`the fake kubelet does not support fieldRef ${path}`);
}

/** A Secret's `data` (base64) and `stringData`, or a ConfigMap's `data`, as text. */
export function valuesOf(object: StoredObject): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, bytes] of secretOrConfigMapBytes(object)) values[key] = bytes.toString('utf8');
  return values;
}

export function secretOrConfigMapBytes(object: StoredObject): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  const data = (object.data ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(data)) {
    entries.set(key, Buffer.from(String(value), object.kind === 'Secret' ? 'base64' : 'utf8'));
  }
  if (object.kind === 'Secret') {
    for (const [key, value] of Object.entries((object.stringData ?? {}) as Record<string, string>))
      entries.set(key, Buffer.from(String(value), 'utf8'));
  }
  return entries;
}
