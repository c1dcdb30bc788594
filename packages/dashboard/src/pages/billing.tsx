import { type GetV1BillingResponse, getV1Billing } from '@replix/client';
import { useQuery } from '@tanstack/react-query';
import { hasRole, useAccount } from '../account.ts';
import { api, unwrap } from '../api.ts';
import { BillingOveragePanel } from '../components/billing-overage.tsx';
import { BillingPlansPanel, PortalButton, planName } from '../components/billing-plans.tsx';
import { BillingUsagePanel } from '../components/billing-usage.tsx';
import { Time } from '../components/bits.tsx';
import { Page, Panel, QueryState } from '../components/page.tsx';
import './account.css';

const OWNERS_ONLY = 'Only owners can change billing.';

const SUBSCRIPTION_WORDS = { none: 'none', active: 'active', canceled: 'ended' } as const;

/** The plan, its limits and usage, the way to another plan, and overage. */
export function BillingPage() {
  const account = useAccount();
  const billing = useQuery({
    queryKey: ['billing'],
    queryFn: () => unwrap(getV1Billing({ client: api })),
    // Coming back from the checkout page (another site, or another tab) shows the new plan.
    refetchOnWindowFocus: true,
  });
  const blocked = account.data && !hasRole(account.data, 'owner') ? OWNERS_ONLY : undefined;
  return (
    <Page title="Billing">
      <QueryState query={billing} what="billing" />
      {blocked && (
        <div className="notice notice-info">
          You can see the account's billing; only its owners can change it.
        </div>
      )}
      {billing.data && (
        <>
          <CurrentPlanPanel billing={billing.data} blocked={blocked} />
          <BillingUsagePanel billing={billing.data} />
          <BillingPlansPanel billing={billing.data} blocked={blocked} />
          <BillingOveragePanel billing={billing.data} blocked={blocked} />
        </>
      )}
    </Page>
  );
}

function CurrentPlanPanel(props: { billing: GetV1BillingResponse; blocked: string | undefined }) {
  const { billing } = props;
  const { subscription } = billing;
  return (
    <Panel
      title="Current plan"
      actions={<PortalButton billing={billing} blocked={props.blocked} />}
    >
      <dl className="stats">
        <div>
          <dt>Plan</dt>
          <dd>{planName(billing.plan)}</dd>
        </div>
        <div>
          <dt>Subscription</dt>
          <dd>
            <span
              className={`badge badge-${subscription.status === 'active' ? 'good' : 'neutral'}`}
            >
              {SUBSCRIPTION_WORDS[subscription.status]}
            </span>
            {subscription.plan &&
              subscription.status === 'active' &&
              ` ${planName(subscription.plan)}`}
          </dd>
        </div>
        <div>
          <dt>Renewal payments</dt>
          <dd>{subscription.renewalPayments}</dd>
        </div>
        <div>
          <dt>Last renewal</dt>
          <dd>
            <Time value={subscription.lastRenewalAt} />
          </dd>
        </div>
        <div>
          <dt>Payment provider</dt>
          <dd>{billing.provider === 'local' ? 'local (test)' : billing.provider}</dd>
        </div>
      </dl>
      {subscription.status === 'active' && billing.plan !== subscription.plan && (
        <p className="muted">
          A service admin set the plan to {planName(billing.plan)}; the subscription is for{' '}
          {planName(subscription.plan ?? '')}.
        </p>
      )}
    </Panel>
  );
}
