import { request } from 'node:http';
import { connect } from 'node:net';
import { isPort } from './tcp-port.ts';

/** A probe of the API: `httpGet` or `tcpSocket` (an `exec` probe is not supported). */
export interface Probe {
  httpGet?: { path?: string; port?: number | string; host?: string; scheme?: string };
  tcpSocket?: { port?: number | string; host?: string };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

/** The seconds a probe must keep failing before the kubelet acts: period × failureThreshold. */
export function failureWindowMs(probe: Probe, defaultThreshold = 3): number {
  return (probe.periodSeconds ?? 10) * 1000 * (probe.failureThreshold ?? defaultThreshold);
}

/**
 * Runs the probe once against the pod's address: an HTTP answer from 200 to 399, or a TCP
 * connection, within `timeoutSeconds` is a success. `resolvePort` turns a named port into the
 * container's port number.
 */
export function runProbe(
  probe: Probe,
  address: string,
  resolvePort: (port: number | string | undefined) => number | undefined,
): Promise<boolean> {
  const seconds = Number(probe.timeoutSeconds ?? 1);
  const timeoutMs = (Number.isFinite(seconds) && seconds >= 1 ? seconds : 1) * 1000;
  if (probe.httpGet) {
    const port = resolvePort(probe.httpGet.port);
    if (!isPort(port)) return Promise.resolve(false);
    return httpProbe(probe.httpGet.host ?? address, port, probe.httpGet.path ?? '/', timeoutMs);
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port);
    if (!isPort(port)) return Promise.resolve(false);
    return tcpProbe(probe.tcpSocket.host ?? address, port, timeoutMs);
  }
  return Promise.resolve(true);
}

function httpProbe(host: string, port: number, path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const options = {
      host,
      port,
      path,
      method: 'GET',
      timeout: timeoutMs,
      headers: { 'user-agent': 'kube-probe/1.32' },
    };
    let probe: ReturnType<typeof request>;
    try {
      probe = request(options, (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        resolve(status >= 200 && status < 400);
      });
    } catch {
      // A path the client refuses to send (spaces, control characters) never succeeds.
      resolve(false);
      return;
    }
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolve(false));
    probe.end();
  });
}

function tcpProbe(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}
