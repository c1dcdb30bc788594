import { describe, expect, it } from 'vitest';
import { resourceByKind } from '../src/kubernetes/api-resources.ts';
import { routeFor } from '../src/kubernetes/gateway-routes.ts';
import { ObjectStore } from '../src/kubernetes/object-store.ts';

function storeWith(...objects: object[]): ObjectStore {
  const store = new ObjectStore();
  store.apply(
    resourceByKind('Namespace'),
    undefined,
    'ns',
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } },
    'm',
    false,
  );
  for (const object of objects) {
    const { kind, metadata } = object as { kind: string; metadata: { name: string } };
    store.apply(resourceByKind(kind), 'ns', metadata.name, object, 'm', false);
  }
  return store;
}

const route = (name: string, hostnames: string[], rules: object[]) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name },
  spec: { hostnames, rules },
});

describe('routeFor', () => {
  it('picks the HTTPRoute of the exact host over a wildcard, and the longest path', () => {
    const store = storeWith(
      route('wild', ['*.example.test'], [{ backendRefs: [{ name: 'wild', port: 80 }] }]),
      route(
        'exact',
        ['a.example.test'],
        [
          { backendRefs: [{ name: 'root', port: 80 }] },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'api', port: 8080 }],
          },
        ],
      ),
    );
    expect(routeFor(store, 'a.example.test', '/x')).toEqual({
      namespace: 'ns',
      service: 'root',
      port: 80,
      weight: 1,
    });
    expect(routeFor(store, 'a.example.test', '/api/v1')?.service).toBe('api');
    expect(routeFor(store, 'a.example.test', '/apix')?.service).toBe('root');
    expect(routeFor(store, 'b.example.test', '/')?.service).toBe('wild');
    expect(routeFor(store, 'example.test', '/')).toBeUndefined();
    expect(routeFor(store, 'other.test', '/')).toBeUndefined();
  });

  it('follows backend weights: a zero weight takes nothing', () => {
    const store = storeWith(
      route(
        'split',
        ['a.example.test'],
        [
          {
            backendRefs: [
              { name: 'old', port: 80, weight: 0 },
              { name: 'new', port: 80, weight: 1 },
            ],
          },
        ],
      ),
    );
    for (let i = 0; i < 20; i++)
      expect(routeFor(store, 'a.example.test', '/')?.service).toBe('new');
  });

  it('routes an Ingress rule by host and path, by port number or name', () => {
    const store = storeWith({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'ing' },
      spec: {
        defaultBackend: { service: { name: 'fallback', port: { number: 80 } } },
        rules: [
          {
            host: 'db.example.test',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'db', port: { name: 'http' } } },
                },
                {
                  path: '/exact',
                  pathType: 'Exact',
                  backend: { service: { name: 'exact', port: { number: 81 } } },
                },
              ],
            },
          },
        ],
      },
    });
    expect(routeFor(store, 'db.example.test', '/q')).toMatchObject({ service: 'db', port: 'http' });
    expect(routeFor(store, 'db.example.test', '/exact')).toMatchObject({
      service: 'exact',
      port: 81,
    });
    expect(routeFor(store, 'db.example.test', '/exact/more')?.service).toBe('db');
    expect(routeFor(store, 'elsewhere.test', '/')?.service).toBe('fallback');
  });
});
