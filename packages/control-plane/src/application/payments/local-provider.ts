import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { insertBillingSession, sessionTokenHash } from '../../adapters/store/billing-sessions.ts';
import type { Store } from '../../adapters/store/schema.ts';
import type {
  CheckoutRequest,
  CheckoutSession,
  PaymentProvider,
  PortalRequest,
} from './payment-provider.ts';

export const LOCAL_CHECKOUT_PATH = '/billing/local-checkout';
export const LOCAL_PORTAL_PATH = '/billing/local-portal';
/** How long a local checkout or portal link works. */
export const LOCAL_SESSION_TTL_MS = 30 * 60 * 1000;

/**
 * The embedded provider: checkout and portal are pages the control plane serves itself
 * (local-billing-pages.ts), each behind an unguessable, expiring token in its URL. Paying on
 * the checkout page completes the plan change at once, so the whole flow works offline.
 * No money moves.
 */
export class LocalPaymentProvider implements PaymentProvider {
  readonly name = 'local' as const;
  readonly #db: Kysely<Store>;

  constructor(db: Kysely<Store>) {
    this.#db = db;
  }

  async #session(
    accountId: string,
    kind: 'checkout' | 'portal',
    plan: string | null,
  ): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await insertBillingSession(this.#db, {
      id: randomUUID(),
      token_hash: sessionTokenHash(token),
      account_id: accountId,
      kind,
      plan,
      expires_at: new Date(Date.now() + LOCAL_SESSION_TTL_MS),
    });
    return token;
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const token = await this.#session(request.accountId, 'checkout', request.plan);
    return {
      url: `${request.origin}${LOCAL_CHECKOUT_PATH}/${token}`,
      customerId: request.customerId ?? `local_cus_${request.accountId}`,
    };
  }

  async createPortal(request: PortalRequest): Promise<{ url: string }> {
    const token = await this.#session(request.accountId, 'portal', null);
    return { url: `${request.origin}${LOCAL_PORTAL_PATH}/${token}` };
  }
}
