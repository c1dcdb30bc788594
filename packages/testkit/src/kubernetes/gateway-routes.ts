import { resourceByKind } from './api-resources.ts';
import type { ObjectStore, StoredObject } from './object-store.ts';

const HTTP_ROUTES = resourceByKind('HTTPRoute');
const INGRESSES = resourceByKind('Ingress');

/** The Service (and its port, by number or name) a request goes to. */
export interface Backend {
  readonly namespace: string;
  readonly service: string;
  readonly port: number | string | undefined;
}

interface Candidate {
  /** Exact host beats wildcard beats any host; then the longer path; then Exact over Prefix. */
  readonly rank: [number, number, number];
  readonly backends: readonly (Backend & { weight: number })[];
}

/**
 * The backend of the HTTPRoute (gateway.networking.k8s.io/v1: `hostnames`, `rules[].matches`
 * path, `rules[].backendRefs` chosen by `weight`) or Ingress (networking.k8s.io/v1: `rules[]`
 * host and `http.paths`, `defaultBackend`) that matches the request best; undefined when none does.
 */
export function routeFor(store: ObjectStore, host: string, path: string): Backend | undefined {
  const candidates: Candidate[] = [];
  for (const route of store.list(HTTP_ROUTES, undefined, () => true)) {
    candidates.push(...httpRouteCandidates(route, host, path));
  }
  for (const ingress of store.list(INGRESSES, undefined, () => true)) {
    candidates.push(...ingressCandidates(ingress, host, path));
  }
  const best = candidates
    .filter((candidate) => candidate.backends.some((backend) => backend.weight > 0))
    .sort((a, b) => compareRanks(b.rank, a.rank))[0];
  return best && weightedChoice(best.backends);
}

function httpRouteCandidates(route: StoredObject, host: string, path: string): Candidate[] {
  const spec = (route.spec ?? {}) as {
    hostnames?: string[];
    rules?: {
      matches?: { path?: { type?: string; value?: string } }[];
      backendRefs?: {
        name?: string;
        namespace?: string;
        kind?: string;
        port?: number;
        weight?: number;
      }[];
    }[];
  };
  const hostRank = hostRankOf(spec.hostnames ?? [], host);
  if (hostRank === undefined) return [];
  const candidates: Candidate[] = [];
  for (const rule of spec.rules ?? []) {
    const backends = (rule.backendRefs ?? [])
      .filter((ref) => (ref.kind ?? 'Service') === 'Service' && ref.name)
      .map((ref) => ({
        namespace: ref.namespace ?? (route.metadata.namespace as string),
        service: ref.name as string,
        port: ref.port,
        weight: ref.weight ?? 1,
      }));
    const matches = rule.matches?.length
      ? rule.matches
      : [{ path: { type: 'PathPrefix', value: '/' } }];
    for (const match of matches) {
      const type = match.path?.type ?? 'PathPrefix';
      const value = match.path?.value ?? '/';
      if (!pathMatches(type === 'Exact' ? 'Exact' : 'Prefix', value, path)) continue;
      candidates.push({ rank: [hostRank, value.length, type === 'Exact' ? 1 : 0], backends });
    }
  }
  return candidates;
}

interface IngressBackend {
  service?: { name?: string; port?: { number?: number; name?: string } };
}

function ingressCandidates(ingress: StoredObject, host: string, path: string): Candidate[] {
  const spec = (ingress.spec ?? {}) as {
    defaultBackend?: IngressBackend;
    rules?: {
      host?: string;
      http?: { paths?: { path?: string; pathType?: string; backend?: IngressBackend }[] };
    }[];
  };
  const namespace = ingress.metadata.namespace as string;
  const backendOf = (backend: IngressBackend | undefined) =>
    backend?.service?.name
      ? [
          {
            namespace,
            service: backend.service.name,
            port: backend.service.port?.number ?? backend.service.port?.name,
            weight: 1,
          },
        ]
      : [];
  const candidates: Candidate[] = [];
  for (const rule of spec.rules ?? []) {
    const hostRank = hostRankOf(rule.host ? [rule.host] : [], host);
    if (hostRank === undefined) continue;
    for (const entry of rule.http?.paths ?? []) {
      const value = entry.path ?? '/';
      if (!pathMatches(entry.pathType === 'Exact' ? 'Exact' : 'Prefix', value, path)) continue;
      candidates.push({
        rank: [hostRank, value.length, entry.pathType === 'Exact' ? 1 : 0],
        backends: backendOf(entry.backend),
      });
    }
  }
  if (spec.defaultBackend)
    candidates.push({ rank: [0, 0, 0], backends: backendOf(spec.defaultBackend) });
  return candidates;
}

/** 3 for the exact host, 2 for a matching `*.` wildcard, 1 when the route names no host. */
function hostRankOf(hostnames: readonly string[], host: string): number | undefined {
  if (hostnames.length === 0) return 1;
  if (hostnames.some((name) => name.toLowerCase() === host)) return 3;
  const wildcard = hostnames.some((name) => {
    if (!name.startsWith('*.')) return false;
    const suffix = name.slice(1).toLowerCase();
    return host.endsWith(suffix) && host.length > suffix.length;
  });
  return wildcard ? 2 : undefined;
}

/** A Prefix matches whole path segments (`/api` matches `/api/x`, not `/apix`). */
function pathMatches(type: 'Exact' | 'Prefix', value: string, path: string): boolean {
  if (type === 'Exact') return path === value;
  const prefix = value.replace(/\/+$/, '');
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference !== 0) return difference;
  }
  return 0;
}

function weightedChoice<T extends { weight: number }>(backends: readonly T[]): T | undefined {
  const total = backends.reduce((sum, backend) => sum + Math.max(backend.weight, 0), 0);
  let point = Math.random() * total;
  for (const backend of backends) {
    point -= Math.max(backend.weight, 0);
    if (point < 0) return backend;
  }
  return backends.find((backend) => backend.weight > 0);
}
