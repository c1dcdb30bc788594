import { ConfigError, decodeEnvironment, type Environment } from '@replix/runtime';
import { type StaticDecode, Type } from 'typebox';
import type { CheckoutPlan } from '../../domain/plans.ts';

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

/** The billing variables of the control plane's environment (docs/control-plane/billing.md). */
export const BILLING_VARIABLE_SCHEMAS = {
  REPLIX_BILLING_PROVIDER: Type.Enum([...BILLING_PROVIDERS], {
    default: 'local',
    problem: `must be one of ${BILLING_PROVIDERS.join(', ')}`,
    description: 'the payment provider',
  }),
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ description: 'Stripe API key' })),
  STRIPE_WEBHOOK_SECRET: Type.Optional(
    Type.String({ description: "the webhook endpoint's signing secret" }),
  ),
  STRIPE_PRICE_PRO: Type.Optional(Type.String({ description: 'price id' })),
  STRIPE_PRICE_TEAMS: Type.Optional(Type.String({ description: 'price id' })),
  STRIPE_PRICE_BUSINESS: Type.Optional(Type.String({ description: 'price id' })),
  STRIPE_API_BASE: Type.Optional(
    Type.String({
      description: 'where the Stripe library sends requests; tests only',
    }),
  ),
  REPLIX_BILLING_RETURN_URL: Type.Optional(
    Type.String({
      pattern: '^https?://',
      problem: 'must be an http(s) URL',
      description: 'where the provider sends the user back',
    }),
  ),
  REPLIX_TOS_VERSION: Type.String({
    pattern: TERMS_VERSION_PATTERN,
    default: DEFAULT_TERMS_VERSION,
    problem: 'must be 1-64 letters, digits, dots, dashes or underscores',
    description: 'the current terms-of-service version',
  }),
};
const BILLING_VARIABLES = Type.Object(BILLING_VARIABLE_SCHEMAS);
type BillingVariables = StaticDecode<typeof BILLING_VARIABLES>;

function required(variables: BillingVariables, name: keyof BillingVariables): string {
  const value = variables[name];
  if (!value) {
    throw new ConfigError(`${name} is required with REPLIX_BILLING_PROVIDER=stripe.`);
  }
  return value;
}
function stripeApiBase(text: string | undefined): StripeApiBase | undefined {
  if (!text) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('STRIPE_API_BASE must be a URL such as http://127.0.0.1:12111.');
  }
  const protocol = url.protocol.slice(0, -1);
  if (protocol !== 'http' && protocol !== 'https') {
    throw new ConfigError('STRIPE_API_BASE must be an http:// or https:// URL.');
  }
  return {
    protocol,
    host: url.hostname,
    port: url.port ? Number(url.port) : protocol === 'https' ? 443 : 80,
  };
}

/** The billing settings of the decoded variables: the Stripe ones all required with `stripe`. */
export function billingConfigFrom(variables: BillingVariables): BillingConfig {
  const provider = variables.REPLIX_BILLING_PROVIDER;
  const stripe: StripeSettings | undefined =
    provider === 'stripe'
      ? {
          secretKey: required(variables, 'STRIPE_SECRET_KEY'),
          webhookSecret: required(variables, 'STRIPE_WEBHOOK_SECRET'),
          prices: {
            pro: required(variables, 'STRIPE_PRICE_PRO'),
            teams: required(variables, 'STRIPE_PRICE_TEAMS'),
            business: required(variables, 'STRIPE_PRICE_BUSINESS'),
          },
          apiBase: stripeApiBase(variables.STRIPE_API_BASE),
        }
      : undefined;
  return Object.freeze({
    provider,
    stripe,
    returnUrl: variables.REPLIX_BILLING_RETURN_URL,
    termsVersion: variables.REPLIX_TOS_VERSION,
  });
}

/** The billing settings alone, decoded from an environment. */
export function resolveBillingConfig(env: Environment): BillingConfig {
  return billingConfigFrom(decodeEnvironment(BILLING_VARIABLES, env));
}
