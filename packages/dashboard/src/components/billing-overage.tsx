import { type GetV1BillingResponse, postV1BillingOverage } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { TextField } from './fields.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { ErrorNotice, Panel } from './page.tsx';

type Billing = GetV1BillingResponse;

const dollars = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' });

export function formatCents(cents: number): string {
  return dollars.format(cents / 100);
}

/** Compute units beyond the plan's, paid up to a monthly spending cap (Teams and up). */
export function BillingOveragePanel(props: { billing: Billing; blocked: string | undefined }) {
  const { overage } = props.billing;
  const queryClient = useQueryClient();
  const [cap, setCap] = useState(
    overage.spendingCapCents ? String(overage.spendingCapCents / 100) : '',
  );
  const capCents = Math.round(Number(cap) * 100);
  const capValid = cap.trim() !== '' && Number.isFinite(capCents) && capCents >= 1;
  const save = useMutation({
    mutationFn: (enabled: boolean) =>
      unwrap(
        postV1BillingOverage({
          client: api,
          body: enabled ? { enabled, spendingCapCents: capCents } : { enabled },
        }),
      ),
    onSuccess: async (result) => {
      if (!result.overageEnabled) setCap('');
      await queryClient.invalidateQueries({ queryKey: ['billing'] });
      await queryClient.invalidateQueries({ queryKey: ['account'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(true);
  };
  // Turning overage off is always allowed; turning it on needs eligibility.
  const mayEnable = overage.enabled || overage.eligible;
  const extraUnits = capValid ? Math.floor(capCents / overage.centsPerComputeUnitMonth) : 0;
  return (
    <Panel title="Overage">
      <p>
        Overage lets the account run more compute units than the plan includes, at{' '}
        {formatCents(overage.centsPerComputeUnitMonth)} per compute unit a month, up to a monthly
        spending cap. Every other limit stays as it is.
      </p>
      <p role="status">
        Overage is{' '}
        {overage.enabled ? (
          <>
            <span className="badge badge-good">on</span>, capped at{' '}
            {formatCents(overage.spendingCapCents ?? 0)} a month ({overage.computeUnitsAllowed}{' '}
            compute units in all).
          </>
        ) : (
          <span className="badge badge-neutral">off</span>
        )}
      </p>
      {!mayEnable && overage.reason && <div className="notice notice-info">{overage.reason}</div>}
      {mayEnable && (
        <form className="stack overage-form" onSubmit={submit} aria-label="Overage settings">
          <TextField
            label="Monthly spending cap (USD)"
            type="number"
            min={0.01}
            step={0.01}
            max={overage.maxSpendingCapCents / 100}
            value={cap}
            onChange={(event) => setCap(event.target.value)}
            disabled={Boolean(props.blocked)}
            hint={`At most ${formatCents(overage.maxSpendingCapCents)} on this plan.${
              capValid ? ` Pays for ${extraUnits} more compute units.` : ''
            }`}
            required
          />
          {save.error && <ErrorNotice error={save.error} />}
          <div className="row">
            <GuardedButton
              type="submit"
              className="button button-primary"
              disabledReason={props.blocked}
              busy={save.isPending}
              disabled={!capValid}
            >
              {overage.enabled ? 'Save spending cap' : 'Turn on overage'}
            </GuardedButton>
            {overage.enabled && (
              <GuardedButton
                className="button button-danger"
                disabledReason={props.blocked}
                busy={save.isPending}
                onClick={() => save.mutate(false)}
              >
                Turn off overage
              </GuardedButton>
            )}
          </div>
        </form>
      )}
    </Panel>
  );
}
