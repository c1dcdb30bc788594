import type { Buffer } from 'node:buffer';
import type { CheckoutPlan } from '../../domain/plans.ts';
import type { BillingProviderName } from './billing-config.ts';

export interface CheckoutRequest {
  readonly accountId: string;
  readonly email: string;
  readonly plan: CheckoutPlan;
  /** The provider's customer for this account, when one was made before. */
  readonly customerId: string | null;
  /** The control plane's own address, for pages it serves and the default return address. */
  readonly origin: string;
}

export interface CheckoutSession {
  /** Where to send the user: the provider's hosted checkout page. */
  readonly url: string;
  /** The provider's customer for the account (made by this call when there was none). */
  readonly customerId: string | null;
}

export interface PortalRequest {
  readonly accountId: string;
  readonly customerId: string | null;
  readonly origin: string;
}

/**
 * What happened at the provider, in the provider's neutral terms; billing-ledger.ts applies it
 * to the account. `eventId` is the provider's id of the event, so a redelivery is applied once.
 */
export type BillingEvent =
  | {
      readonly kind: 'subscription_started';
      readonly eventId: string;
      /** From the checkout's metadata; the customer id finds the account otherwise. */
      readonly accountId: string | null;
      readonly customerId: string | null;
      readonly subscriptionId: string | null;
      readonly plan: string | null;
    }
  | {
      /** A successful renewal payment (not the first payment of a subscription). */
      readonly kind: 'renewal_paid';
      readonly eventId: string;
      readonly customerId: string | null;
      readonly subscriptionId: string | null;
    }
  | {
      /** The subscription moved to another plan (a change made in the provider's portal). */
      readonly kind: 'subscription_changed';
      readonly eventId: string;
      readonly customerId: string | null;
      readonly subscriptionId: string | null;
      /** The plan of the subscription's price; null when the price is not one of ours. */
      readonly plan: string | null;
    }
  | {
      readonly kind: 'subscription_ended';
      readonly eventId: string;
      readonly customerId: string | null;
      readonly subscriptionId: string | null;
    }
  | {
      /** An event the control plane does not act on (acknowledged so the provider stops sending it). */
      readonly kind: 'ignored';
      readonly eventId: string;
      readonly providerType: string;
    };

/** A provider webhook whose signature does not verify (or is missing, or too old). */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/**
 * Takes payments for plans. `local` (the embedded default) serves its own checkout page;
 * `stripe` uses Stripe Checkout and the Billing Portal and learns the outcome from Stripe's
 * signed webhooks.
 */
export interface PaymentProvider {
  readonly name: BillingProviderName;
  /** A hosted checkout page for a subscription to `plan`. */
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /** The hosted billing portal of an account with an active subscription. */
  createPortal(request: PortalRequest): Promise<{ readonly url: string }>;
  /**
   * Verifies a provider webhook's signature over its raw body and reads the event; throws
   * WebhookSignatureError. Absent for a provider without webhooks (local).
   */
  readonly verifyWebhook?: (rawBody: Buffer, signature: string | undefined) => BillingEvent;
}
