import { ControlPlaneConfigError } from '../config.ts';
import type { CheckoutPlan } from '../domain/plans.ts';

export const BILLING_PROVIDERS = ['local', 'stripe'] as const;
export type BillingProviderName = (typeof BILLING_PROVIDERS)[number];

/** Where the Stripe library sends its requests; only tests point it elsewhere. */
export interface StripeApiBase {
  readonly protocol: 'http' | 'https';
  readonly host: string;
  readonly port: number;
}

export interface StripeSettings {
  readonly secretKey: string;
  readonly webhookSecret: string;
  /** The Stripe price id of each plan a checkout sells. */
  readonly prices: Readonly<Record<CheckoutPlan, string>>;
  readonly apiBase: StripeApiBase | undefined;
}

/** Billing and terms settings, resolved once at start (docs/control-plane/billing.md). */
export interface BillingConfig {
  readonly provider: BillingProviderName;
  /** Present exactly when the provider is `stripe`. */
  readonly stripe: StripeSettings | undefined;
  /** Where the provider sends the user back after checkout or the portal; default the API's own address. */
  readonly returnUrl: string | undefined;
  /** The current terms-of-service version, what `POST /v1/account/accept-tos` records by default. */
  readonly termsVersion: string;
}

export const DEFAULT_TERMS_VERSION = '2026-01-01';
/** A terms version: a date or a short dotted/dashed name. */
export const TERMS_VERSION_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) {
    throw new ControlPlaneConfigError(`${name} is required with REPLIX_BILLING_PROVIDER=stripe.`);
  }
  return value;
}

function stripeApiBase(text: string | undefined): StripeApiBase | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ControlPlaneConfigError(
      'STRIPE_API_BASE must be a URL such as http://127.0.0.1:12111.',
    );
  }
  const protocol = url.protocol.slice(0, -1);
  if (protocol !== 'http' && protocol !== 'https') {
    throw new ControlPlaneConfigError('STRIPE_API_BASE must be an http:// or https:// URL.');
  }
  return {
    protocol,
    host: url.hostname,
    port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80,
  };
}

/**
 * `REPLIX_BILLING_PROVIDER` (`local`, the default, or `stripe`); with `stripe`:
 * `STRIPE_SECRET_KEY`, `STRIPE_WEBHOOK_SECRET`, `STRIPE_PRICE_PRO`, `STRIPE_PRICE_TEAMS`,
 * `STRIPE_PRICE_BUSINESS` (all required) and `STRIPE_API_BASE` (tests only);
 * `REPLIX_BILLING_RETURN_URL`; `REPLIX_TOS_VERSION` (default 2026-01-01).
 */
export function resolveBillingConfig(env: NodeJS.ProcessEnv): BillingConfig {
  const provider = (env.REPLIX_BILLING_PROVIDER || 'local') as BillingProviderName;
  if (!BILLING_PROVIDERS.includes(provider)) {
    throw new ControlPlaneConfigError(
      `REPLIX_BILLING_PROVIDER must be one of ${BILLING_PROVIDERS.join(', ')}.`,
    );
  }
  const termsVersion = env.REPLIX_TOS_VERSION || DEFAULT_TERMS_VERSION;
  if (!new RegExp(TERMS_VERSION_PATTERN).test(termsVersion)) {
    throw new ControlPlaneConfigError(
      'REPLIX_TOS_VERSION must be 1-64 letters, digits, dots, dashes or underscores.',
    );
  }
  const returnUrl = env.REPLIX_BILLING_RETURN_URL || undefined;
  if (returnUrl && !/^https?:\/\//.test(returnUrl)) {
    throw new ControlPlaneConfigError('REPLIX_BILLING_RETURN_URL must be an http(s) URL.');
  }
  const stripe: StripeSettings | undefined =
    provider === 'stripe'
      ? {
          secretKey: required(env, 'STRIPE_SECRET_KEY'),
          webhookSecret: required(env, 'STRIPE_WEBHOOK_SECRET'),
          prices: {
            pro: required(env, 'STRIPE_PRICE_PRO'),
            teams: required(env, 'STRIPE_PRICE_TEAMS'),
            business: required(env, 'STRIPE_PRICE_BUSINESS'),
          },
          apiBase: stripeApiBase(env.STRIPE_API_BASE),
        }
      : undefined;
  return Object.freeze({ provider, stripe, returnUrl, termsVersion });
}
