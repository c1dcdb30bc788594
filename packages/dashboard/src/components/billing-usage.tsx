import type { GetV1BillingResponse } from '@replix/client';
import { useId } from 'react';
import { formatNumber } from './bits.tsx';
import { Panel } from './page.tsx';

type Billing = GetV1BillingResponse;

/** One "used of allowed" figure with a meter; over the limit is said in words too. */
function UsageMeter(props: { label: string; used: number; limit: number; note?: string }) {
  const id = useId();
  const over = props.used > props.limit;
  return (
    <div className="usage-meter">
      <span id={id}>
        <strong>{props.label}</strong>: {formatNumber(props.used)} of {formatNumber(props.limit)}
        {over && <span className="badge badge-bad"> over the limit</span>}
      </span>
      <meter
        aria-labelledby={id}
        min={0}
        max={Math.max(props.limit, props.used, 1)}
        low={props.limit * 0.8}
        high={props.limit}
        optimum={0}
        value={props.used}
      />
      {props.note && <span className="muted">{props.note}</span>}
    </div>
  );
}

/** What the plan allows and what the account uses of it. */
export function BillingUsagePanel(props: { billing: Billing }) {
  const { limits, usage, overage } = props.billing;
  const extraUnits = overage.computeUnitsAllowed - limits.computeUnits;
  return (
    <Panel title="Limits and usage">
      <div className="grid-2">
        <UsageMeter label="Databases" used={usage.databases} limit={limits.databases} />
        <UsageMeter
          label="Compute units running"
          used={usage.computeUnits}
          limit={overage.computeUnitsAllowed}
          note={
            extraUnits > 0
              ? `${limits.computeUnits} in the plan + ${extraUnits} paid by overage.`
              : 'Instance sizes cost xs 1, s 2, m 4, l 8, xl 16 units.'
          }
        />
      </div>
      <dl className="stats">
        <div>
          <dt>Largest instance size</dt>
          <dd>{limits.maxInstanceSize}</dd>
        </div>
        <div>
          <dt>Poll-mode minimum interval</dt>
          <dd>{limits.pollModeMinSyncInterval} s</dd>
        </div>
        <div>
          <dt>Data transfer a month</dt>
          <dd>{formatNumber(limits.dataTransferGBPerMonth)} GB</dd>
        </div>
        <div>
          <dt>Multi-region</dt>
          <dd>{limits.multiRegion ? 'yes' : 'no'}</dd>
        </div>
        <div>
          <dt>Overage</dt>
          <dd>{limits.overageAllowed ? 'available' : 'not on this plan'}</dd>
        </div>
      </dl>
      <p className="muted">
        A downgrade never stops what runs: new starts are refused until usage fits the plan. Data
        transfer is shown, not metered yet.
      </p>
    </Panel>
  );
}
