import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { ConfigError, flagVariable } from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';

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

/** The webhook variables of the control plane's environment. */
export const WEBHOOK_VARIABLE_SCHEMAS = {
  REPLIX_WEBHOOKS_ALLOW_LOCAL: flagVariable({
    problem: 'must be 1 or 0',
    description: 'development and tests only: allow http:// and loopback and private addresses',
  }),
  REPLIX_WEBHOOKS_CA_FILE: Type.Optional(
    Type.String({
      description: 'CAs trusted for receivers besides the public roots',
    }),
  ),
  REPLIX_WEBHOOK_TIMEOUT_MS: Type.Integer({
    exclusiveMinimum: 0,
    default: 10_000,
    problem: 'must be a positive integer',
    echo: true,
    description: 'how long a receiver has to answer',
  }),
  REPLIX_WEBHOOK_RETRY_SCALE: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1,
    default: 1,
    problem: 'must be a number above 0 and at most 1',
    echo: true,
    description: 'multiplies the retry waits',
  }),
  REPLIX_WEBHOOK_POLL_MS: Type.Integer({
    exclusiveMinimum: 0,
    default: 1000,
    problem: 'must be a positive integer',
    echo: true,
    description: 'how often the deliverer looks for due deliveries',
  }),
};
const WEBHOOK_VARIABLES = Type.Object(WEBHOOK_VARIABLE_SCHEMAS);

/** The webhook settings of the decoded variables; the CA file is read here, once. */
export function webhookSettingsFrom(
  variables: StaticDecode<typeof WEBHOOK_VARIABLES>,
): WebhookSettings {
  const caFile = variables.REPLIX_WEBHOOKS_CA_FILE;
  let ca: string[] | undefined;
  if (caFile) {
    try {
      ca = [...rootCertificates, readFileSync(caFile, 'utf8')];
    } catch {
      throw new ConfigError(`REPLIX_WEBHOOKS_CA_FILE names a file that cannot be read: ${caFile}.`);
    }
  }
  return Object.freeze({
    allowLocal: variables.REPLIX_WEBHOOKS_ALLOW_LOCAL,
    ca,
    timeoutMs: variables.REPLIX_WEBHOOK_TIMEOUT_MS,
    retryScale: variables.REPLIX_WEBHOOK_RETRY_SCALE,
    pollIntervalMs: variables.REPLIX_WEBHOOK_POLL_MS,
  });
}
