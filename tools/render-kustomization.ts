// Renders the few kustomize features deploy/kubernetes uses, without kubectl: Debian's kubectl
// (kubernetes-client 1.20) embeds kustomize 2.0, which reads neither `labels` nor
// `configMapGenerator.envs`, so the tests cannot count on a kubectl that renders the base.
// Where a recent kubectl is on PATH, a test checks this renderer's output against its own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

interface Kustomization {
  namespace?: string;
  labels?: Array<{ pairs: Record<string, string> }>;
  resources?: string[];
  configMapGenerator?: Array<{ name: string; namespace?: string; envs: string[] }>;
  /** A new tag or, pinned, a digest (`sha256:<hex>`, giving `name@sha256:<hex>`). */
  images?: Array<{ name: string; newName: string; newTag?: string; digest?: string }>;
}

const KNOWN_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'labels',
  'resources',
  'configMapGenerator',
  'images',
]);
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

/** `KEY=value` lines, as kustomize reads an env file (blank lines and `#` comments skipped). */
export function parseEnvFile(text: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at < 1) throw new Error(`not a KEY=value line: ${line}`);
    entries[line.slice(0, at)] = line.slice(at + 1);
  }
  return entries;
}

function containersOf(object: RenderedObject): Array<{ image?: string }> {
  const spec = (object.spec as { template?: { spec?: Record<string, unknown> } } | undefined)
    ?.template?.spec;
  if (!spec) return [];
  return [
    ...((spec.containers as Array<{ image?: string }>) ?? []),
    ...((spec.initContainers as Array<{ image?: string }>) ?? []),
  ];
}

/**
 * The objects `kubectl kustomize <dir>` makes of a kustomization using only namespace, labels
 * (metadata only), file resources, ConfigMaps from env files (each in its namespace, if it
 * names one) and image names with a tag or a digest; any other field
 * is refused, so the two cannot silently differ. Generated ConfigMaps keep their plain names
 * (kustomize appends a content hash to them and to their references).
 */
export function renderKustomization(dir: string): RenderedObject[] {
  const kustomization = parse(
    readFileSync(join(dir, 'kustomization.yaml'), 'utf8'),
  ) as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(kustomization).filter((field) => !KNOWN_FIELDS.has(field));
  if (unknown.length > 0)
    throw new Error(`kustomization fields not rendered: ${unknown.join(', ')}`);

  const objects: RenderedObject[] = [];
  for (const file of kustomization.resources ?? []) {
    for (const document of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (document.errors.length > 0) throw document.errors[0];
      const object = document.toJS() as RenderedObject | null;
      if (object) objects.push(object);
    }
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    const data = Object.assign(
      {},
      ...generator.envs.map((file) => parseEnvFile(readFileSync(join(dir, file), 'utf8'))),
    );
    const metadata = {
      name: generator.name,
      ...(generator.namespace ? { namespace: generator.namespace } : {}),
    };
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data });
  }
  for (const object of objects) {
    if (kustomization.namespace && !CLUSTER_SCOPED.has(object.kind))
      object.metadata.namespace = kustomization.namespace;
    for (const { pairs } of kustomization.labels ?? [])
      object.metadata.labels = { ...object.metadata.labels, ...pairs };
    for (const container of containersOf(object)) {
      const image = kustomization.images?.find(
        (candidate) =>
          container.image === candidate.name || container.image?.startsWith(`${candidate.name}:`),
      );
      if (image)
        container.image = image.digest
          ? `${image.newName}@${image.digest}`
          : `${image.newName}:${image.newTag}`;
    }
  }
  return objects;
}
