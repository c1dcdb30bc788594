import { resourceByKind } from './api-resources.ts';
import type { ObjectStore, StoredObject } from './object-store.ts';
import { nameSuffix } from './pod-template.ts';

const EVENTS = resourceByKind('Event');

/**
 * core/v1 Events about objects, as `kubectl get events` and `kubectl describe` show them: the
 * same reason and message about the same object again counts up one Event.
 */
export class EventRecorder {
  readonly #store: ObjectStore;
  readonly #component: string;
  readonly #recorded = new Map<string, { name: string; count: number; first: string }>();

  constructor(store: ObjectStore, component: string) {
    this.#store = store;
    this.#component = component;
  }

  record(about: StoredObject, type: 'Normal' | 'Warning', reason: string, message: string): void {
    const { name, namespace, uid } = about.metadata;
    if (namespace === undefined) return;
    const key = `${uid}/${reason}/${message}`;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const previous = this.#recorded.get(key);
    const event = previous
      ? { ...previous, count: previous.count + 1 }
      : { name: `${name}.${nameSuffix()}${nameSuffix()}`, count: 1, first: now };
    this.#recorded.set(key, event);
    this.#store.put(EVENTS, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: event.name, namespace },
      involvedObject: {
        apiVersion: about.apiVersion,
        kind: about.kind,
        name,
        namespace,
        uid,
      },
      type,
      reason,
      message,
      count: event.count,
      firstTimestamp: event.first,
      lastTimestamp: now,
      source: { component: this.#component },
      reportingComponent: this.#component,
    });
  }
}
