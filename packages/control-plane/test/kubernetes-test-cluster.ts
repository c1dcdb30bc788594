import { type Agent, request as httpRequest } from 'node:http';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The `replix` command of this checkout: what the fake kubelet's pods run as the image's CLI. */
export const REPLIX_BIN = fileURLToPath(new URL('../../cli/bin/replix.js', import.meta.url));

/**
 * A GET as a client sends it: to an IP address directly; to a name (an endpoint's host, which
 * no DNS here resolves) through the fake's gateway with that `Host`.
 */
export function throughGateway(
  gatewayUrl: string,
  url: string,
  headers: Record<string, string>,
  agent?: Agent,
): Promise<Response> {
  const target = new URL(url);
  if (isIP(target.hostname)) return fetch(url, { headers });
  const gateway = new URL(gatewayUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: gateway.hostname,
        port: gateway.port,
        path: `${target.pathname}${target.search}`,
        headers: { ...headers, host: target.host },
        ...(agent ? { agent } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve(
            new Response(Buffer.concat(chunks), {
              status: response.statusCode ?? 502,
              headers: { 'content-type': String(response.headers['content-type'] ?? '') },
            }),
          ),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}
