import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';

/**
 * The `X-Service-Signature` value (spec §6): `t=<unix seconds>,v1=<hex>`, hex being the
 * lowercase HMAC-SHA256, keyed with the signing secret as shown at creation (its 64 hex
 * characters, as text), of `<t>.<raw body>`.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  const hex = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${hex}`;
}

/**
 * The same signing secret in its Standard Webhooks form (standardwebhooks.com): `whsec_` and
 * the secret's 32 bytes in base64. Shown once at creation beside the hex form, for receivers
 * that verify with a Standard Webhooks library.
 */
export function standardWebhooksSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'hex').toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` (the event id, the same on
 * every retry), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`:
 * `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<raw body>`, keyed with the secret's
 * 32 bytes (what `whsec_` carries).
 */
export function standardWebhooksHeaders(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signature = createHmac('sha256', Buffer.from(secret, 'hex'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${signature}`,
  };
}
