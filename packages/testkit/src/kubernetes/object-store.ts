import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type ApiResource, groupVersion, resourceByKind } from './api-resources.ts';
import { ApiError, badRequest, notFound } from './api-status.ts';
import type { JsonObject } from './field-paths.ts';
import {
  deleteAt,
  type FieldKey,
  fieldsV1,
  leafFields,
  overlaps,
  pathOf,
  setAt,
  valueAt,
} from './field-paths.ts';

export type { JsonObject } from './field-paths.ts';

/** An object as the API server returns it. */
export interface StoredObject extends JsonObject {
  apiVersion: string;
  kind: string;
  metadata: JsonObject & { name: string; namespace?: string; uid: string; resourceVersion: string };
}

/**
 * A write: `applied` by a client (what the simulated controller reacts to), `written` by the
 * controller itself, or `deleted`. Watches see them all.
 */
export type StoreEvent = {
  type: 'applied' | 'written' | 'deleted';
  /** The write made the object. */
  created: boolean;
  resource: ApiResource;
  object: StoredObject;
};

interface Ownership {
  readonly fields: Set<FieldKey>;
  readonly apiVersion: string;
  readonly time: string;
}

interface Entry {
  object: StoredObject;
  readonly owners: Map<string, Ownership>;
}

/** Set by the server, never by an applied configuration. */
const SERVER_METADATA = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/**
 * The fake API server's objects and the semantics of writing them: server-side apply with
 * field ownership per manager, resourceVersion and generation, deletion with propagation.
 */
export class ObjectStore {
  readonly #objects = new Map<string, Entry>();
  readonly #listeners: ((event: StoreEvent) => void)[] = [];
  readonly #holds: ((object: StoredObject) => boolean)[] = [];
  readonly #defaulters: ((resource: ApiResource, object: JsonObject) => void)[] = [];
  /** Keys of owners deleted in the foreground, waiting for their dependents to go. */
  readonly #foreground = new Set<string>();
  #resourceVersion = 0;

  /** Calls `listener` after every write; returns the call that stops it. */
  onChange(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.push(listener);
    return () => this.#listeners.splice(this.#listeners.indexOf(listener), 1);
  }

  /** The resourceVersion of the last write, as a list reports it. */
  get resourceVersion(): string {
    return String(this.#resourceVersion);
  }

  get(resource: ApiResource, namespace: string | undefined, name: string): StoredObject {
    const entry = this.#objects.get(objectKey(resource, namespace, name));
    if (!entry) throw notFound(resource.plural, resource.group, name);
    return render(entry);
  }

  list(
    resource: ApiResource,
    namespace: string | undefined,
    matches: (labels: Record<string, string>) => boolean,
  ) {
    return [...this.#objects.values()]
      .filter(
        ({ object }) =>
          object.kind === resource.kind && object.apiVersion === groupVersion(resource),
      )
      .filter(({ object }) => namespace === undefined || object.metadata.namespace === namespace)
      .filter(({ object }) => matches((object.metadata.labels ?? {}) as Record<string, string>))
      .map(render)
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  }

  /**
   * Server-side apply of `config` by `manager`: creates the object or merges the fields the
   * manager sets, and drops the fields it set before and no longer does (unless another
   * manager owns them too). A field another manager owns with a different value is a 409
   * unless `force`, which takes it over.
   */
  apply(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    body: unknown,
    manager: string,
    force: boolean,
  ): StoredObject {
    const config = this.#validConfig(resource, namespace, name, body);
    const key = objectKey(resource, namespace, name);
    const entry = this.#objects.get(key);
    const fields = leafFields(config);
    const owners = new Map(entry?.owners ?? []);

    const conflicts = entry ? conflictsWith(entry, manager, config, fields) : [];
    if (conflicts.length > 0 && !force) throw conflictError(conflicts);
    for (const { manager: other, field } of conflicts) {
      const owned = owners.get(other) as Ownership;
      const remaining = new Set([...owned.fields].filter((own) => !overlaps(own, field)));
      if (remaining.size === 0) owners.delete(other);
      else owners.set(other, { ...owned, fields: remaining });
    }

    const next: JsonObject = structuredClone(
      entry?.object ?? { apiVersion: config.apiVersion, kind: config.kind, metadata: {} },
    );
    for (const field of owners.get(manager)?.fields ?? []) {
      const ownedByOthers = [...owners].some(
        ([other, own]) => other !== manager && [...own.fields].some((f) => overlaps(f, field)),
      );
      if (!fields.has(field) && !ownedByOthers) deleteAt(next, pathOf(field));
    }
    for (const field of fields) setAt(next, pathOf(field), valueAt(config, pathOf(field)));
    const previous = owners.get(manager);
    const sameFields = previous !== undefined && isDeepStrictEqual(previous.fields, fields);
    owners.set(
      manager,
      sameFields ? previous : { fields, apiVersion: config.apiVersion as string, time: now() },
    );

    const unchanged =
      entry !== undefined &&
      isDeepStrictEqual(next, entry.object) &&
      sameOwners(owners, entry.owners);
    if (unchanged) return render(entry);

    const metadata = next.metadata as JsonObject;
    metadata.name = name;
    if (namespace !== undefined) metadata.namespace = namespace;
    if (!entry) {
      metadata.uid = randomUUID();
      metadata.creationTimestamp = now();
      if (resource.generation) metadata.generation = 1;
      if (resource.kind === 'Namespace') next.status = { phase: 'Active' };
      for (const defaulter of this.#defaulters) defaulter(resource, next);
    } else if (resource.generation && !isDeepStrictEqual(specOf(next), specOf(entry.object))) {
      metadata.generation = (metadata.generation as number) + 1;
    }
    metadata.resourceVersion = this.#nextResourceVersion();
    const written: Entry = { object: next as StoredObject, owners };
    this.#objects.set(key, written);
    this.#emit({ type: 'applied', created: !entry, resource, object: render(written) });
    return render(written);
  }

  /** A write by the simulated controller itself (Pods it makes), outside field ownership. */
  put(
    resource: ApiResource,
    object: Omit<StoredObject, 'metadata'> & { metadata: JsonObject },
  ): StoredObject {
    const { name, namespace } = object.metadata as { name: string; namespace?: string };
    const key = objectKey(resource, namespace, name);
    const existing = this.#objects.get(key);
    const metadata = {
      uid: randomUUID(),
      creationTimestamp: now(),
      ...existing?.object.metadata,
      ...object.metadata,
      resourceVersion: this.#nextResourceVersion(),
    };
    const entry: Entry = {
      object: { ...object, metadata } as unknown as StoredObject,
      owners: existing?.owners ?? new Map(),
    };
    this.#objects.set(key, entry);
    this.#emit({ type: 'written', created: !existing, resource, object: render(entry) });
    return render(entry);
  }

  /** The `status` the simulated controller reports; a write only when it differs. */
  setStatus(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    status: JsonObject,
  ): void {
    const entry = this.#objects.get(objectKey(resource, namespace, name));
    if (!entry || isDeepStrictEqual(entry.object.status, status)) return;
    entry.object = {
      ...entry.object,
      status,
      metadata: { ...entry.object.metadata, resourceVersion: this.#nextResourceVersion() },
    };
    this.#emit({ type: 'written', created: false, resource, object: render(entry) });
  }

  /**
   * Deletes the object. `Foreground` and `Background` delete its dependents (by
   * ownerReferences uid) too, and a Namespace takes everything in it; `Orphan` leaves
   * dependents without the reference. Like the API server, a Job's default is `Orphan`, every
   * other kind's `Background`. Without a deletion hold the object goes at once; an object a
   * hold claims (a running Pod) only gets `deletionTimestamp` until its holder calls
   * `finishDeletion`, and a `Foreground` owner of such objects waits, with the
   * `foregroundDeletion` finalizer, until they are gone.
   */
  delete(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    propagationPolicy?: string,
    gracePeriodSeconds?: number,
  ): StoredObject {
    const policy = propagationPolicy ?? (resource.kind === 'Job' ? 'Orphan' : 'Background');
    if (!['Foreground', 'Background', 'Orphan'].includes(policy)) {
      throw new ApiError(
        422,
        'Invalid',
        `DeleteOptions.meta.k8s.io is invalid: propagationPolicy: Unsupported value: "${policy}"`,
        {
          causes: [
            {
              type: 'FieldValueNotSupported',
              message: `Unsupported value: "${policy}"`,
              field: 'propagationPolicy',
            },
          ],
        },
      );
    }
    const deleted = this.get(resource, namespace, name);
    this.#remove(resourceByKind(deleted.kind), deleted, policy, gracePeriodSeconds);
    this.#settleForeground();
    return deleted;
  }

  /**
   * `hold` claims the objects it will terminate itself (true): deleting one only marks it,
   * and the holder removes it with `finishDeletion` when it is really gone.
   */
  holdDeletion(hold: (object: StoredObject) => boolean): void {
    this.#holds.push(hold);
  }

  /** Removes an object a deletion hold kept, and completes foreground deletions it blocked. */
  finishDeletion(resource: ApiResource, namespace: string | undefined, name: string): void {
    const key = objectKey(resource, namespace, name);
    const entry = this.#objects.get(key);
    if (!entry) return;
    this.#objects.delete(key);
    this.#emit({ type: 'deleted', created: false, resource, object: render(entry) });
    this.#settleForeground();
  }

  /** Sets defaults on objects clients create (a Service's clusterIP), before they are stored. */
  admit(defaulter: (resource: ApiResource, object: JsonObject) => void): void {
    this.#defaulters.push(defaulter);
  }

  #remove(
    resource: ApiResource,
    object: StoredObject,
    policy: string,
    gracePeriodSeconds?: number,
  ): void {
    const { name, namespace, uid } = object.metadata;
    const key = objectKey(resource, namespace, name);
    const entry = this.#objects.get(key);
    if (!entry || entry.object.metadata.deletionTimestamp !== undefined) return;
    if (this.#holds.some((hold) => hold(render(entry)))) {
      const spec = (entry.object.spec ?? {}) as { terminationGracePeriodSeconds?: number };
      this.#mark(entry, resource, {
        deletionGracePeriodSeconds: gracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30,
      });
      return;
    }
    const foreground = policy === 'Foreground' && resource.kind !== 'Namespace';
    if (foreground) {
      this.#mark(entry, resource, { finalizers: ['foregroundDeletion'] });
      this.#foreground.add(key);
    } else {
      this.#objects.delete(key);
      this.#emit({ type: 'deleted', created: false, resource, object });
    }
    for (const entry of [...this.#objects.values()]) {
      const dependent = entry.object;
      const references = (dependent.metadata.ownerReferences ?? []) as { uid: string }[];
      const inNamespace = resource.kind === 'Namespace' && dependent.metadata.namespace === name;
      if (!inNamespace && !references.some((reference) => reference.uid === uid)) continue;
      if (policy === 'Orphan' && !inNamespace) {
        const kept = references.filter((reference) => reference.uid !== uid);
        entry.object = {
          ...dependent,
          metadata: {
            ...dependent.metadata,
            ownerReferences: kept,
            resourceVersion: this.#nextResourceVersion(),
          },
        };
        const dependentResource = resourceByKind(dependent.kind);
        this.#emit({
          type: 'written',
          created: false,
          resource: dependentResource,
          object: render(entry),
        });
      } else {
        this.#remove(resourceByKind(dependent.kind), render(entry), policy);
      }
    }
  }

  /** Marks an object as being deleted (`deletionTimestamp` and the given fields). */
  #mark(entry: Entry, resource: ApiResource, fields: JsonObject): void {
    entry.object = {
      ...entry.object,
      metadata: {
        ...entry.object.metadata,
        deletionTimestamp: now(),
        ...fields,
        resourceVersion: this.#nextResourceVersion(),
      },
    };
    this.#emit({ type: 'written', created: false, resource, object: render(entry) });
  }

  /** Removes the foreground-deleted owners none of whose dependents remain. */
  #settleForeground(): void {
    for (let settled = true; settled; ) {
      settled = false;
      for (const key of this.#foreground) {
        const entry = this.#objects.get(key);
        const uid = entry?.object.metadata.uid;
        const blocked = [...this.#objects.values()].some(({ object }) =>
          ((object.metadata.ownerReferences ?? []) as { uid: string }[]).some(
            (reference) => reference.uid === uid,
          ),
        );
        if (entry && blocked) continue;
        this.#foreground.delete(key);
        if (!entry) continue;
        this.#objects.delete(key);
        const resource = resourceByKind(entry.object.kind);
        this.#emit({ type: 'deleted', created: false, resource, object: render(entry) });
        settled = true;
      }
    }
  }

  #validConfig(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    body: unknown,
  ): JsonObject {
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('the apply patch must be an object');
    const config = structuredClone(body) as JsonObject;
    const metadata = (config.metadata ?? {}) as JsonObject;
    if (config.apiVersion !== groupVersion(resource) || config.kind !== resource.kind) {
      throw badRequest(
        `the apply patch is a ${String(config.apiVersion)} ${String(config.kind)}, the URL names ${groupVersion(resource)} ${resource.kind}`,
      );
    }
    if (metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (metadata.namespace !== undefined && metadata.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      const message = `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`;
      throw new ApiError(422, 'Invalid', `${resource.kind} "${name}" is invalid: ${message}`, {
        name,
        kind: resource.kind,
        group: resource.group,
        causes: [{ type: 'FieldValueInvalid', message, field: 'metadata.name' }],
      });
    }
    if (
      namespace !== undefined &&
      !this.#objects.has(objectKey(resourceByKind('Namespace'), undefined, namespace))
    ) {
      throw notFound('namespaces', '', namespace);
    }
    delete config.status;
    for (const field of [...SERVER_METADATA, 'name', 'namespace']) delete metadata[field];
    config.metadata = metadata;
    return config;
  }

  #nextResourceVersion(): string {
    this.#resourceVersion += 1;
    return String(this.#resourceVersion);
  }

  #emit(event: StoreEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}

function objectKey(resource: ApiResource, namespace: string | undefined, name: string): string {
  return `${groupVersion(resource)}/${resource.kind}/${namespace ?? ''}/${name}`;
}

function keyOf(object: StoredObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Everything but metadata and status: what `generation` counts changes of. */
function specOf(object: JsonObject): JsonObject {
  const { metadata: _metadata, status: _status, ...spec } = object;
  return spec;
}

interface Conflict {
  readonly manager: string;
  readonly field: FieldKey;
}

function conflictsWith(
  entry: Entry,
  manager: string,
  config: JsonObject,
  fields: Set<FieldKey>,
): Conflict[] {
  const conflicts: Conflict[] = [];
  for (const [other, owned] of entry.owners) {
    if (other === manager) continue;
    for (const field of fields) {
      for (const own of owned.fields) {
        if (!overlaps(own, field)) continue;
        const shorter = pathOf(own.length < field.length ? own : field);
        const known = conflicts.some((c) => c.manager === other && c.field === own);
        if (
          !known &&
          !isDeepStrictEqual(valueAt(entry.object, shorter), valueAt(config, shorter))
        ) {
          conflicts.push({ manager: other, field: own });
        }
      }
    }
  }
  return conflicts;
}

function conflictError(conflicts: Conflict[]): ApiError {
  const causes = conflicts.map(({ manager, field }) => ({
    type: 'FieldManagerConflict',
    message: `conflict with "${manager}"`,
    field: `.${(pathOf(field)).join('.')}`,
  }));
  const list = causes.map((cause) => `${cause.message}: ${cause.field}`).join('\n- ');
  const count = causes.length === 1 ? '1 conflict' : `${causes.length} conflicts`;
  return new ApiError(409, 'Conflict', `Apply failed with ${count}: ${list}`, { causes });
}

function sameOwners(a: Map<string, Ownership>, b: Map<string, Ownership>): boolean {
  return (
    a.size === b.size &&
    [...a].every(([manager, own]) => isDeepStrictEqual(own.fields, b.get(manager)?.fields))
  );
}

/** The object with `metadata.managedFields` in the API server's FieldsV1 form. */
function render(entry: Entry): StoredObject {
  const managedFields = [...entry.owners].map(([manager, own]) => ({
    manager,
    operation: 'Apply',
    apiVersion: own.apiVersion,
    time: own.time,
    fieldsType: 'FieldsV1',
    fieldsV1: fieldsV1(own.fields),
  }));
  const object = structuredClone(entry.object);
  if (managedFields.length > 0) object.metadata.managedFields = managedFields;
  return object;
}
