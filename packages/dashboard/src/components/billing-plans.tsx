import { type GetV1BillingResponse, postV1BillingCheckout } from '@replix/client';
import { useMutation } from '@tanstack/react-query';
import { api, unwrap } from '../api.ts';
import { GuardedButton } from './guarded-button.tsx';
import { ErrorNotice, Panel } from './page.tsx';

type Billing = GetV1BillingResponse;
type CheckoutPlan = 'pro' | 'teams' | 'business';

type PlanLimits = Billing['plans'][number]['limits'];

/** What sets a plan apart, in a few words, from its limits as the API gives them. */
function planHighlights(limits: PlanLimits): string[] {
  const lines = [
    `${limits.databases} databases`,
    `${limits.computeUnits} compute units`,
    `instances up to ${limits.maxInstanceSize}`,
    `poll every ${limits.pollModeMinSyncInterval} s or more`,
  ];
  if (limits.multiRegion) lines.push('multi-region');
  if (limits.overageAllowed) {
    lines.push(`overage up to $${(limits.overageMaxCents / 100).toLocaleString()} a month`);
  }
  return lines;
}

export function planName(plan: string): string {
  return plan.charAt(0).toUpperCase() + plan.slice(1);
}

function isCheckoutPlan(billing: Billing, plan: string): plan is CheckoutPlan {
  return billing.checkoutPlans.includes(plan);
}

/**
 * Asks for a checkout (or, with an active subscription, the billing portal) and goes there.
 * The local provider's pages are served by the control plane itself, under /billing/.
 */
export function useCheckout() {
  return useMutation({
    mutationFn: (plan: CheckoutPlan) =>
      unwrap(postV1BillingCheckout({ client: api, body: { plan } })),
    onSuccess: ({ url }) => window.location.assign(url),
  });
}

/** The subscription's billing portal, reached through checkout with its own plan. */
export function PortalButton(props: { billing: Billing; blocked: string | undefined }) {
  const checkout = useCheckout();
  const { subscription } = props.billing;
  const plan = subscription.plan ?? '';
  if (subscription.status !== 'active' || !isCheckoutPlan(props.billing, plan)) return null;
  return (
    <>
      <GuardedButton
        className="button"
        disabledReason={props.blocked}
        busy={checkout.isPending}
        onClick={() => checkout.mutate(plan)}
      >
        Open the billing portal
      </GuardedButton>
      {checkout.error && <ErrorNotice error={checkout.error} />}
    </>
  );
}

/** Every plan, the current one marked, with the way to each of the others. */
export function BillingPlansPanel(props: { billing: Billing; blocked: string | undefined }) {
  const { billing } = props;
  const checkout = useCheckout();
  const subscribed = billing.subscription.status === 'active';
  return (
    <Panel title="Plans">
      <p className="muted">
        {subscribed
          ? 'You have a subscription: changing or cancelling it happens in the billing portal, where the buttons below take you.'
          : 'Choosing a paid plan opens the checkout; the plan changes once the payment completes.'}
        {billing.provider === 'local' &&
          ' This installation uses the local test provider: no payment is taken.'}
      </p>
      {checkout.error && <ErrorNotice error={checkout.error} />}
      <ul className="plan-cards">
        {billing.plans.map(({ name: plan, limits }) => {
          const current = plan === billing.plan;
          return (
            <li key={plan} className={`plan-card${current ? ' plan-card-current' : ''}`}>
              <h3>
                {planName(plan)}
                {current && <span className="badge badge-good">current</span>}
              </h3>
              <ul>
                {planHighlights(limits).map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
              <PlanAction
                plan={plan}
                current={current}
                billing={billing}
                blocked={props.blocked}
                pending={checkout.isPending}
                onCheckout={(chosen) => checkout.mutate(chosen)}
              />
            </li>
          );
        })}
      </ul>
    </Panel>
  );
}

function PlanAction(props: {
  plan: string;
  current: boolean;
  billing: Billing;
  blocked: string | undefined;
  pending: boolean;
  onCheckout: (plan: CheckoutPlan) => void;
}) {
  const { plan, billing } = props;
  if (props.current) return <span className="muted">Your plan</span>;
  if (plan === 'enterprise') {
    return <span className="muted">Sales-led: a service admin sets it.</span>;
  }
  if (!isCheckoutPlan(billing, plan)) {
    // Free: a downgrade is cancelling the subscription, in the portal.
    return billing.subscription.status === 'active' ? (
      <span className="muted">Cancel your subscription in the billing portal.</span>
    ) : (
      <span className="muted">Not available by checkout.</span>
    );
  }
  return (
    <GuardedButton
      className="button button-primary"
      disabledReason={props.blocked}
      busy={props.pending}
      onClick={() => props.onCheckout(plan)}
    >
      Choose {planName(plan)}
    </GuardedButton>
  );
}
