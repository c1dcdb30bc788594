/** Field paths in a Kubernetes object, as server-side apply tracks who set what. */

export type JsonObject = Record<string, unknown>;

/** A field path inside an object, `["spec","replicas"]`, keyed as its JSON. */
export type FieldKey = string;

export function pathOf(field: FieldKey): string[] {
  return JSON.parse(field) as string[];
}

/**
 * The fields a configuration sets: every leaf of its maps. Lists are atomic (one field), a
 * simplification of the API server's keyed lists such as containers by name.
 */
export function leafFields(config: JsonObject): Set<FieldKey> {
  const fields = new Set<FieldKey>();
  const walk = (value: unknown, path: string[]) => {
    if (isMap(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) walk(child, [...path, key]);
    } else if (path.length > 0) {
      fields.add(JSON.stringify(path));
    }
  };
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = config;
  walk(rest, []);
  fields.delete(JSON.stringify(['metadata'])); // only name and namespace, which nobody owns
  return fields;
}

/** One path is the other or inside it. */
export function overlaps(a: FieldKey, b: FieldKey): boolean {
  const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
  return longer === shorter || longer.startsWith(`${shorter.slice(0, -1)},`);
}

export function isMap(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function valueAt(object: unknown, path: string[]): unknown {
  return path.reduce<unknown>((node, key) => (isMap(node) ? node[key] : undefined), object);
}

export function setAt(object: JsonObject, path: string[], value: unknown): void {
  let node = object;
  for (const key of path.slice(0, -1)) {
    if (!isMap(node[key])) node[key] = {};
    node = node[key] as JsonObject;
  }
  node[path.at(-1) as string] = structuredClone(value);
}

/** Removes a field and the maps it leaves empty. */
export function deleteAt(object: JsonObject, path: string[]): void {
  const [key, ...rest] = path as [string, ...string[]];
  if (rest.length === 0) {
    delete object[key];
    return;
  }
  const child = object[key];
  if (!isMap(child)) return;
  deleteAt(child, rest);
  if (Object.keys(child).length === 0) delete object[key];
}

/** The fields as the API server's FieldsV1 tree: `{"f:spec": {"f:replicas": {}}}`. */
export function fieldsV1(fields: Set<FieldKey>): JsonObject {
  const tree: JsonObject = {};
  for (const field of fields) {
    let node = tree;
    for (const key of JSON.parse(field) as string[]) {
      node[`f:${key}`] ??= {};
      node = node[`f:${key}`] as JsonObject;
    }
  }
  return tree;
}
