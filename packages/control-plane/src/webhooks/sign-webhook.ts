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
