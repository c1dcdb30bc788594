import { connect, createServer, type Server, type Socket } from 'node:net';
import { resourceByKind } from './api-resources.ts';
import { LoopbackAddresses } from './loopback-addresses.ts';
import type { JsonObject, ObjectStore, StoredObject, StoreEvent } from './object-store.ts';
import type { ServiceEndpoints, ServicePort } from './service-endpoints.ts';
import { isPort } from './tcp-port.ts';

const SERVICES = resourceByKind('Service');

interface Listener {
  readonly address: string;
  readonly servers: Map<number, Server>;
}

/**
 * The fake's kube-proxy: a Service gets `spec.clusterIP` from 127.88.0.0/16 when it is
 * created (ClusterIP, NodePort and LoadBalancer types; not a headless `None`), and a TCP
 * listener on clusterIP:port for each of its ports. Each new connection goes to a ready pod
 * the Service selects at that moment (`ServiceEndpoints`); with none ready, it is closed, as
 * in a cluster. Open connections stay where they are when the selector changes.
 */
export class LocalKubeProxy {
  readonly #store: ObjectStore;
  readonly #endpoints: ServiceEndpoints;
  readonly #addresses = new LoopbackAddresses('127.88');
  readonly #listeners = new Map<string, Listener>();
  readonly #sockets = new Set<Socket>();
  readonly #stopWatching: () => void;
  #closed = false;

  constructor(store: ObjectStore, endpoints: ServiceEndpoints) {
    this.#store = store;
    this.#endpoints = endpoints;
    store.admit((resource, object) => {
      if (resource.kind !== 'Service') return;
      const spec = (object.spec ?? {}) as JsonObject;
      const type = spec.type ?? 'ClusterIP';
      if (spec.clusterIP !== undefined || type === 'ExternalName') return;
      const address = this.#addresses.take();
      object.spec = { ...spec, clusterIP: address, clusterIPs: [address] };
    });
    this.#stopWatching = store.onChange((event) => queueMicrotask(() => this.#sync(event)));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopWatching();
    for (const socket of this.#sockets) socket.destroy();
    const servers = [...this.#listeners.values()].flatMap(({ servers }) => [...servers.values()]);
    this.#listeners.clear();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }

  #sync({ type, object }: StoreEvent): void {
    if (this.#closed || object.kind !== 'Service') return;
    const key = `${object.metadata.namespace}/${object.metadata.name}`;
    const spec = (object.spec ?? {}) as { clusterIP?: string; ports?: ServicePort[] };
    const address = spec.clusterIP;
    let listener = this.#listeners.get(key);
    if (listener && (type === 'deleted' || listener.address !== address)) {
      for (const server of listener.servers.values()) server.close();
      this.#addresses.release(listener.address);
      this.#listeners.delete(key);
      listener = undefined;
    }
    if (type === 'deleted' || !address || address === 'None') return;
    if (!listener) {
      listener = { address, servers: new Map() };
      this.#listeners.set(key, listener);
    }
    const ports = new Set(
      (spec.ports ?? [])
        .filter((port) => (port.protocol ?? 'TCP') === 'TCP' && isPort(port.port))
        .map((port) => port.port as number),
    );
    for (const [port, server] of listener.servers) {
      if (ports.has(port)) continue;
      server.close();
      listener.servers.delete(port);
    }
    for (const port of ports) {
      if (listener.servers.has(port)) continue;
      const { namespace, name } = object.metadata;
      // Half-open sockets on both sides, so a client's half-close passes through and the
      // answer still comes back.
      const server = createServer({ allowHalfOpen: true }, (socket) =>
        this.#forward(socket, namespace as string, name, port),
      );
      // Taken by another program: the Service's port does not answer, as with a broken proxy.
      server.on('error', () => {});
      server.listen(port, address);
      listener.servers.set(port, server);
    }
  }

  #forward(client: Socket, namespace: string, name: string, port: number): void {
    this.#sockets.add(client);
    client.once('close', () => this.#sockets.delete(client));
    let service: StoredObject;
    try {
      service = this.#store.get(SERVICES, namespace, name);
    } catch {
      client.destroy();
      return;
    }
    const servicePort = ((service.spec as JsonObject).ports as ServicePort[] | undefined)?.find(
      (entry) => entry.port === port,
    );
    const endpoint = servicePort && this.#endpoints.pick(service, servicePort);
    if (!endpoint) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: endpoint.host, port: endpoint.port, allowHalfOpen: true });
    this.#sockets.add(upstream);
    upstream.once('close', () => this.#sockets.delete(upstream));
    // Each side's end ends the other's: a half-close passes through.
    client.pipe(upstream).pipe(client);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  }
}
