/**
 * Schemas the API checks loosely but documents in full. The schema config is one: a request's
 * `schemaConfig` is validated by the engine (`parseSchemaConfig`), whose 400
 * `invalid_schema_config` names each key path, not by the framework (whose `validation_failed`
 * would name JSON pointers, and whose defaults would be written into the config as given). The
 * route declares the loose schema; the OpenAPI document shows the full one in its place.
 */
const fullSchemas = new WeakMap<object, object>();

/** `schema`, which the OpenAPI document shows as `documented`. */
export function documentedAs<T extends object>(schema: T, documented: object): T {
  fullSchemas.set(schema, documented);
  return schema;
}

/**
 * A route's schema as the OpenAPI document shows it: every schema given to `documentedAs` in
 * it replaced by its full one. Parts without one are the same objects (a schema with an `$id`
 * keeps its identity unless it holds one).
 */
export function schemaForDocument(node: unknown): unknown {
  if (node === null || typeof node !== 'object') return node;
  const full = fullSchemas.get(node);
  if (full) return full;
  let changed = false;
  const entries = Object.entries(node).map(([key, value]) => {
    const shown = schemaForDocument(value);
    if (shown !== value) changed = true;
    return [key, shown] as const;
  });
  if (!changed) return node;
  return Array.isArray(node) ? entries.map(([, value]) => value) : Object.fromEntries(entries);
}
