import type { Buffer } from 'node:buffer';
import { withTraceHeaders } from '@replix/runtime/tracing';
import { deriveApiKey } from './api-keys.ts';

/** How long the control plane waits for an instance before calling it unreachable. */
const INSTANCE_TIMEOUT_MS = 3000;

export interface InstanceResponse {
  readonly status: number;
  readonly text: string;
}

/**
 * Calls a running instance's HTTP API with the control plane's own key (its id is always in
 * the instance's allowed set, derived from the database's key secret like any API key).
 */
export class InstanceClient {
  readonly #endpointUrl: string;
  readonly #authorization: string;

  constructor(endpointUrl: string, keySecret: Buffer, controlKeyId: string) {
    this.#endpointUrl = endpointUrl.replace(/\/$/, '');
    this.#authorization = `Bearer ${deriveApiKey(keySecret, controlKeyId)}`;
  }

  /** Throws on a network failure or timeout; any HTTP status is returned. */
  async call(method: 'GET' | 'POST', path: string): Promise<InstanceResponse> {
    const response = await fetch(`${this.#endpointUrl}${path}`, {
      method,
      // Within a traced step (an admin action), the instance continues its trace.
      headers: withTraceHeaders({ authorization: this.#authorization }),
      signal: AbortSignal.timeout(INSTANCE_TIMEOUT_MS),
    });
    return { status: response.status, text: await response.text() };
  }

  async json<T>(
    method: 'GET' | 'POST',
    path: string,
  ): Promise<{ status: number; body: T | undefined }> {
    const { status, text } = await this.call(method, path);
    try {
      return { status, body: JSON.parse(text) as T };
    } catch {
      return { status, body: undefined };
    }
  }
}

/**
 * The status a replica's `/health` answers (200 once its snapshot is in; no key needed), or 0
 * when it cannot be reached within the timeout.
 */
export async function healthStatusOf(replicaUrl: string): Promise<number> {
  try {
    const response = await fetch(`${replicaUrl.replace(/\/$/, '')}/health`, {
      headers: withTraceHeaders({}),
      signal: AbortSignal.timeout(INSTANCE_TIMEOUT_MS),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0;
  }
}
