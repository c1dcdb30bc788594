import type { Kysely } from 'kysely';
import type { Store } from '../../adapters/store/schema.ts';
import type { BillingConfig } from './billing-config.ts';
import { LocalPaymentProvider } from './local-provider.ts';
import type { PaymentProvider } from './payment-provider.ts';
import { StripePaymentProvider } from './stripe-provider.ts';

/** The configured payment provider (`REPLIX_BILLING_PROVIDER`). */
export function createPaymentProvider(config: BillingConfig, db: Kysely<Store>): PaymentProvider {
  if (config.provider === 'stripe' && config.stripe) {
    return new StripePaymentProvider(config.stripe, config.returnUrl);
  }
  return new LocalPaymentProvider(db);
}
