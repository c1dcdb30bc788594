import type { Buffer } from 'node:buffer';
import Stripe from 'stripe';
import type { StripeSettings } from './billing-config.ts';
import {
  type BillingEvent,
  type CheckoutRequest,
  type CheckoutSession,
  type PaymentProvider,
  type PortalRequest,
  WebhookSignatureError,
} from './payment-provider.ts';

/** Where Stripe sends the user back: the configured address, or the control plane's own page. */
function returnAddress(returnUrl: string | undefined, origin: string): string {
  return returnUrl ?? `${origin}/billing/return`;
}

/** A Stripe id field: a plain id, or an expanded object carrying one. */
function idOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string') {
    return (value as { id: string }).id;
  }
  return null;
}

/** The few fields read from each event object; everything else is left alone. */
interface EventObject {
  readonly id?: string;
  readonly customer?: unknown;
  readonly subscription?: unknown;
  readonly client_reference_id?: string | null;
  readonly metadata?: Record<string, string> | null;
  readonly billing_reason?: string | null;
  readonly parent?: { readonly subscription_details?: { readonly subscription?: unknown } | null };
  readonly status?: string;
  readonly items?: { readonly data?: ReadonlyArray<{ readonly price?: { readonly id?: string } }> };
}

/**
 * Stripe through its official library: Checkout Sessions in subscription mode (one price per
 * plan, from configuration), the Billing Portal, and signed webhooks verified with the
 * endpoint secret. The account id travels in the checkout's `client_reference_id` and
 * metadata, so the webhook finds the account.
 */
export class StripePaymentProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  readonly #stripe: Stripe;
  readonly #settings: StripeSettings;
  readonly #returnUrl: string | undefined;

  constructor(settings: StripeSettings, returnUrl: string | undefined) {
    this.#settings = settings;
    this.#returnUrl = returnUrl;
    this.#stripe = new Stripe(settings.secretKey, {
      maxNetworkRetries: 1,
      timeout: 20_000,
      telemetry: false,
      ...(settings.apiBase
        ? {
            host: settings.apiBase.host,
            port: settings.apiBase.port,
            protocol: settings.apiBase.protocol,
          }
        : {}),
    });
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const customerId =
      request.customerId ??
      (
        await this.#stripe.customers.create({
          email: request.email,
          metadata: { accountId: request.accountId },
        })
      ).id;
    const back = returnAddress(this.#returnUrl, request.origin);
    const session = await this.#stripe.checkout.sessions.create({
      mode: 'subscription',
      customer: customerId,
      client_reference_id: request.accountId,
      line_items: [{ price: this.#settings.prices[request.plan], quantity: 1 }],
      metadata: { accountId: request.accountId, plan: request.plan },
      subscription_data: { metadata: { accountId: request.accountId, plan: request.plan } },
      success_url: `${back}?checkout=success`,
      cancel_url: `${back}?checkout=cancelled`,
    });
    if (!session.url) throw new Error('Stripe returned a checkout session without a url.');
    return { url: session.url, customerId };
  }

  async createPortal(request: PortalRequest): Promise<{ url: string }> {
    if (!request.customerId) throw new Error('No Stripe customer for this account.');
    const session = await this.#stripe.billingPortal.sessions.create({
      customer: request.customerId,
      return_url: returnAddress(this.#returnUrl, request.origin),
    });
    return { url: session.url };
  }

  readonly verifyWebhook = (rawBody: Buffer, signature: string | undefined): BillingEvent => {
    if (!signature) throw new WebhookSignatureError('The Stripe-Signature header is missing.');
    let event: Stripe.Event;
    try {
      event = this.#stripe.webhooks.constructEvent(
        rawBody,
        signature,
        this.#settings.webhookSecret,
      );
    } catch {
      throw new WebhookSignatureError(
        'The Stripe-Signature header does not verify against the endpoint secret, or is too old.',
      );
    }
    const object = event.data.object as unknown as EventObject;
    const customerId = idOf(object.customer);
    switch (event.type) {
      case 'checkout.session.completed':
        return {
          kind: 'subscription_started',
          eventId: event.id,
          accountId: object.client_reference_id ?? object.metadata?.accountId ?? null,
          customerId,
          subscriptionId: idOf(object.subscription),
          plan: object.metadata?.plan ?? null,
        };
      case 'invoice.paid':
        // Only a renewal counts: the first invoice of a subscription is `subscription_create`.
        if (object.billing_reason !== 'subscription_cycle') break;
        return {
          kind: 'renewal_paid',
          eventId: event.id,
          customerId,
          subscriptionId:
            idOf(object.parent?.subscription_details?.subscription) ?? idOf(object.subscription),
        };
      case 'customer.subscription.updated': {
        const priceId = object.items?.data?.[0]?.price?.id;
        const plan = Object.entries(this.#settings.prices).find(([, id]) => id === priceId)?.[0];
        return {
          kind: 'subscription_changed',
          eventId: event.id,
          customerId,
          subscriptionId: object.id ?? null,
          plan: plan ?? null,
        };
      }
      case 'customer.subscription.deleted':
        return {
          kind: 'subscription_ended',
          eventId: event.id,
          customerId,
          subscriptionId: object.id ?? null,
        };
    }
    return { kind: 'ignored', eventId: event.id, providerType: event.type };
  };
}
