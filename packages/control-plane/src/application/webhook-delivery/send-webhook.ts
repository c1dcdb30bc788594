import { Buffer } from 'node:buffer';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { WebhookTarget } from './resolve-webhook-target.ts';

export interface WebhookRequest {
  readonly target: WebhookTarget;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly timeoutMs: number;
  /** Trusted CAs (the public roots by default). */
  readonly ca: readonly string[] | undefined;
}

/** What one attempt came to: a status code, or an error in words (never an address). */
export interface WebhookResponse {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/** Socket and TLS failures in words a receiver's owner can act on, without addresses. */
function describeFailure(error: NodeJS.ErrnoException, timeoutMs: number): string {
  switch (error.code) {
    case 'WEBHOOK_TIMEOUT':
      return `No response within ${timeoutMs / 1000} s.`;
    case 'ECONNREFUSED':
      return 'Connection refused.';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'The connection was reset before a response came.';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'The host is unreachable.';
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return 'TLS failed: the certificate does not name the host.';
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return `TLS failed: the certificate is not trusted (${error.code}).`;
    default:
      return error.code ? `The request failed (${error.code}).` : 'The request failed.';
  }
}

/**
 * POSTs one delivery attempt to the checked address of the target (a pinned lookup: the
 * connection goes where the SSRF check looked, while TLS still verifies the host name). A
 * 2xx before the timeout is success; anything else, redirects included (never followed), is a
 * failure. The response body is drained and ignored.
 */
export function sendWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const { target } = request;
  const started = performance.now();
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const secure = target.url.protocol === 'https:';
  const options: https.RequestOptions = {
    method: 'POST',
    host: target.host,
    port: target.url.port || (secure ? 443 : 80),
    path: `${target.url.pathname}${target.url.search}`,
    headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
    agent: false,
    lookup: pinned,
    ...(secure
      ? {
          servername: isIP(target.host) ? undefined : target.host,
          ...(request.ca ? { ca: [...request.ca] } : {}),
        }
      : {}),
  };
  return new Promise((resolve) => {
    let settled = false;
    const finish = (response: Omit<WebhookResponse, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...response, durationMs: Math.round(performance.now() - started) });
    };
    const outgoing = (secure ? https : http).request(options, (response) => {
      const statusCode = response.statusCode ?? 0;
      const ok = statusCode >= 200 && statusCode < 300;
      finish({
        ok,
        statusCode,
        error: ok
          ? null
          : statusCode >= 300 && statusCode < 400
            ? `The endpoint answered HTTP ${statusCode}; redirects are not followed.`
            : `The endpoint answered HTTP ${statusCode}.`,
      });
      // Drain what the receiver sends, but never wait on it for long.
      response.resume();
      response.setTimeout(request.timeoutMs, () => response.destroy());
      response.on('error', () => {});
    });
    const timer = setTimeout(() => {
      const error: NodeJS.ErrnoException = new Error('timeout');
      error.code = 'WEBHOOK_TIMEOUT';
      outgoing.destroy(error);
    }, request.timeoutMs);
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      finish({ ok: false, statusCode: null, error: describeFailure(error, request.timeoutMs) }),
    );
    outgoing.end(request.body);
  });
}
