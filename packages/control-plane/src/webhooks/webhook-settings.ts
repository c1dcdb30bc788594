import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ControlPlaneConfigError } from '../config.ts';

/** How webhooks are delivered; docs/control-plane/webhooks.md documents each variable. */
export interface WebhookSettings {
  /**
   * `REPLIX_WEBHOOKS_ALLOW_LOCAL=1`, for local development and tests only: URLs may use
   * `http://` and reach loopback and private addresses. Link-local (cloud metadata) and the
   * other reserved ranges stay blocked.
   */
  readonly allowLocal: boolean;
  /** `REPLIX_WEBHOOKS_CA_FILE`: the CAs trusted for receivers, the public roots plus this file. */
  readonly ca: readonly string[] | undefined;
  /** `REPLIX_WEBHOOK_TIMEOUT_MS` (default 10 000): how long a receiver has to answer. */
  readonly timeoutMs: number;
  /** `REPLIX_WEBHOOK_RETRY_SCALE` (default 1): multiplies the retry delays (tests shrink them). */
  readonly retryScale: number;
  /** `REPLIX_WEBHOOK_POLL_MS` (default 1000): how often the deliverer looks for due deliveries. */
  readonly pollIntervalMs: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = Object.freeze({
  allowLocal: false,
  ca: undefined,
  timeoutMs: 10_000,
  retryScale: 1,
  pollIntervalMs: 1000,
});

function numberSetting(
  name: string,
  text: string | undefined,
  fallback: number,
  check: (value: number) => boolean,
  rule: string,
): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || !check(value)) {
    throw new ControlPlaneConfigError(`${name} must be ${rule}, not "${text}".`);
  }
  return value;
}

/** Reads the webhook settings from the environment, with clear messages for bad values. */
export function resolveWebhookSettings(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const allow = env.REPLIX_WEBHOOKS_ALLOW_LOCAL ?? '';
  if (!['', '0', '1', 'true', 'false'].includes(allow)) {
    throw new ControlPlaneConfigError('REPLIX_WEBHOOKS_ALLOW_LOCAL must be 1 or 0.');
  }
  let ca: string[] | undefined;
  if (env.REPLIX_WEBHOOKS_CA_FILE) {
    try {
      ca = [...rootCertificates, readFileSync(env.REPLIX_WEBHOOKS_CA_FILE, 'utf8')];
    } catch {
      throw new ControlPlaneConfigError(
        `REPLIX_WEBHOOKS_CA_FILE names a file that cannot be read: ${env.REPLIX_WEBHOOKS_CA_FILE}.`,
      );
    }
  }
  return Object.freeze({
    allowLocal: allow === '1' || allow === 'true',
    ca,
    timeoutMs: numberSetting(
      'REPLIX_WEBHOOK_TIMEOUT_MS',
      env.REPLIX_WEBHOOK_TIMEOUT_MS,
      DEFAULT_WEBHOOK_SETTINGS.timeoutMs,
      (value) => Number.isInteger(value) && value > 0,
      'a positive integer',
    ),
    retryScale: numberSetting(
      'REPLIX_WEBHOOK_RETRY_SCALE',
      env.REPLIX_WEBHOOK_RETRY_SCALE,
      1,
      (value) => value > 0 && value <= 1,
      'a number above 0 and at most 1',
    ),
    pollIntervalMs: numberSetting(
      'REPLIX_WEBHOOK_POLL_MS',
      env.REPLIX_WEBHOOK_POLL_MS,
      DEFAULT_WEBHOOK_SETTINGS.pollIntervalMs,
      (value) => Number.isInteger(value) && value > 0,
      'a positive integer',
    ),
  });
}
