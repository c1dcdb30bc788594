import type { Buffer } from 'node:buffer';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ControlPlaneMetrics } from '../roles/control-plane-metrics.ts';

/** Where every control-plane process serves its metrics: beside its probes. */
export const METRICS_PATH = '/metrics';

/** `/metrics`'s answer: the exposition text, or an error in the control plane's envelope. */
export type MetricsAnswer =
  | { readonly status: 200; readonly contentType: string; readonly body: string }
  | {
      readonly status: 401 | 404;
      readonly body: { readonly error: 'unauthorized' | 'not_found'; readonly message: string };
    };

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Answers `GET /metrics` for the scrape credential `REPLIX_METRICS_TOKEN`: without one
 * configured the path does not exist (404); a request must carry it as a bearer token (401
 * otherwise). The tokens are compared as SHA-256 digests in constant time, so neither the time
 * taken nor an early length mismatch tells a caller how close a guess was.
 */
export class MetricsEndpoint {
  readonly #metrics: ControlPlaneMetrics;
  readonly #tokenDigest: Buffer | undefined;

  constructor(metrics: ControlPlaneMetrics, token: string | undefined) {
    this.#metrics = metrics;
    this.#tokenDigest = token ? digest(token) : undefined;
  }

  async answer(authorization: string | undefined): Promise<MetricsAnswer> {
    if (!this.#tokenDigest)
      return {
        status: 404,
        body: { error: 'not_found', message: 'Metrics are off: REPLIX_METRICS_TOKEN is not set.' },
      };
    const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization) : null;
    const given = digest(match?.[1] ?? '');
    if (!match || !timingSafeEqual(given, this.#tokenDigest))
      return {
        status: 401,
        body: { error: 'unauthorized', message: 'The metrics scrape token is required.' },
      };
    return {
      status: 200,
      contentType: this.#metrics.contentType,
      body: await this.#metrics.exposition(),
    };
  }
}
