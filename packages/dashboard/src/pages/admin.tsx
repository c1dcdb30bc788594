import {
  type GetV1AdminCustomersResponse,
  getV1AdminCustomers,
  type PatchV1AdminCustomersByIdPlanData,
  patchV1AdminCustomersByIdPlan,
  postV1AdminCustomersByIdDeprovision,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, isApiError, unwrap } from '../api.ts';
import { formatNumber, Time } from '../components/bits.tsx';
import { ConfirmDialogButton } from '../components/confirm.tsx';
import { ACTIONS, DataTable } from '../components/data-table.tsx';
import { Checkbox, SelectField, TextField } from '../components/fields.tsx';
import { Empty, ErrorNotice, Page, Panel, QueryState } from '../components/page.tsx';
import './account.css';

type Customer = GetV1AdminCustomersResponse[number];
type Plan = PatchV1AdminCustomersByIdPlanData['body']['plan'];

const PLANS: readonly Plan[] = ['free', 'pro', 'teams', 'business', 'enterprise'];
const PAGE_SIZE = 20;
const CUSTOMERS_KEY = ['admin', 'customers'] as const;

/** Operator page for service admins: every customer, their plan, and stopping what they run. */
export function AdminPage() {
  const customers = useQuery({
    queryKey: CUSTOMERS_KEY,
    queryFn: () => unwrap(getV1AdminCustomers({ client: api })),
  });
  if (isApiError(customers.error, 'forbidden')) {
    return (
      <Page title="Admin">
        <div className="notice notice-info" role="alert">
          <p>
            <strong>This page is for service admins</strong>: members of the identity provider's{' '}
            <code>service-admins</code> group, who manage every customer of this Replix.
          </p>
          <p>
            Your account's own settings are on the Team, Billing and Settings pages. An operator can
            make an admin login link with{' '}
            <code>npx replix login-link --email you@example.com --admin</code>.
          </p>
        </div>
      </Page>
    );
  }
  return (
    <Page title="Admin">
      <QueryState query={customers} what="the customers" />
      {customers.data && <Customers customers={customers.data} />}
    </Page>
  );
}

/** The filters live in the address, so a filtered list can be reloaded and shared. */
function useFilters() {
  const [params, setParams] = useSearchParams();
  const filters = {
    search: params.get('q') ?? '',
    plan: params.get('plan') ?? '',
    overLimit: params.get('over') === '1',
    page: Math.max(1, Number(params.get('page')) || 1),
    customer: params.get('customer') ?? '',
  };
  const update = (changes: Record<string, string | undefined>) => {
    setParams(
      (previous) => {
        const next = new URLSearchParams(previous);
        for (const [key, value] of Object.entries(changes)) {
          if (value) next.set(key, value);
          else next.delete(key);
        }
        return next;
      },
      { replace: true },
    );
  };
  return { filters, update };
}

function matches(customer: Customer, filters: ReturnType<typeof useFilters>['filters']): boolean {
  const search = filters.search.trim().toLowerCase();
  if (search && !customer.email.toLowerCase().includes(search) && !customer.id.startsWith(search)) {
    return false;
  }
  if (filters.plan && customer.plan !== filters.plan) return false;
  return !filters.overLimit || customer.overLimit;
}

function Customers(props: { customers: Customer[] }) {
  const { filters, update } = useFilters();
  const shown = props.customers.filter((customer) => matches(customer, filters));
  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const page = Math.min(filters.page, pages);
  const rows = shown.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const selected = props.customers.find((customer) => customer.id === filters.customer);
  const overLimit = props.customers.filter((customer) => customer.overLimit).length;
  // Any filter change goes back to the first page.
  const filter = (changes: Record<string, string | undefined>) =>
    update({ ...changes, page: undefined });

  return (
    <>
      <Panel title="Customers">
        <dl className="stats">
          <div>
            <dt>Customers</dt>
            <dd>{formatNumber(props.customers.length)}</dd>
          </div>
          <div>
            <dt>Over their plan's limits</dt>
            <dd>{formatNumber(overLimit)}</dd>
          </div>
          <div>
            <dt>Running instances</dt>
            <dd>
              {formatNumber(props.customers.reduce((sum, c) => sum + c.runningInstanceCount, 0))}
            </dd>
          </div>
        </dl>
        <search className="admin-filters" aria-label="Filter customers">
          <TextField
            label="Search"
            type="search"
            placeholder="Email or account id"
            value={filters.search}
            onChange={(event) => filter({ q: event.target.value })}
          />
          <SelectField
            label="Plan"
            value={filters.plan}
            onChange={(event) => filter({ plan: event.target.value })}
            options={[
              { value: '', label: 'Every plan' },
              ...PLANS.map((plan) => ({ value: plan, label: plan })),
            ]}
          />
          <Checkbox
            label="Only over their limits"
            checked={filters.overLimit}
            onChange={(checked) => filter({ over: checked ? '1' : undefined })}
          />
        </search>
        {props.customers.length === 0 && (
          <Empty title="No customers yet">
            An account appears here after its first user signs in.
          </Empty>
        )}
        {props.customers.length > 0 && shown.length === 0 && (
          <Empty title="No customers match these filters">
            <button
              type="button"
              className="button button-small"
              onClick={() =>
                update({ q: undefined, plan: undefined, over: undefined, page: undefined })
              }
            >
              Clear the filters
            </button>
          </Empty>
        )}
        {rows.length > 0 && (
          <CustomerTable
            rows={rows}
            selectedId={selected?.id}
            onManage={(id) => update({ customer: id })}
          />
        )}
        {shown.length > PAGE_SIZE && (
          <nav className="pager" aria-label="Pages of customers">
            <span aria-live="polite">
              {(page - 1) * PAGE_SIZE + 1}–{Math.min(page * PAGE_SIZE, shown.length)} of{' '}
              {shown.length}
            </span>
            <div className="row">
              <button
                type="button"
                className="button button-small"
                disabled={page <= 1}
                onClick={() => update({ page: String(page - 1) })}
              >
                Previous page
              </button>
              <button
                type="button"
                className="button button-small"
                disabled={page >= pages}
                onClick={() => update({ page: String(page + 1) })}
              >
                Next page
              </button>
            </div>
          </nav>
        )}
      </Panel>
      {selected && (
        <ManageCustomer
          key={selected.id}
          customer={selected}
          onClose={() => update({ customer: undefined })}
        />
      )}
    </>
  );
}

function CustomerTable(props: {
  rows: Customer[];
  selectedId: string | undefined;
  onManage: (id: string) => void;
}) {
  return (
    <DataTable
      caption="Customers"
      className="account-table"
      columns={[
        'Customer',
        'Plan',
        { label: 'Databases', number: true },
        { label: 'Running', number: true },
        { label: 'Builds (30 days)', number: true },
        'Last activity',
        'Created',
        ACTIONS,
      ]}
    >
      {props.rows.map((customer) => (
        <tr key={customer.id} aria-current={customer.id === props.selectedId || undefined}>
          <td>
            {customer.email}
            <div className="muted">
              <code>{customer.id.slice(0, 8)}</code>
            </div>
          </td>
          <td>
            {customer.plan}
            {customer.overLimit && <span className="badge badge-bad"> over limit</span>}
          </td>
          <td className="number">
            {customer.databaseCount} / {customer.planLimit.databases}
          </td>
          <td className="number">{customer.runningInstanceCount}</td>
          <td className="number">{customer.buildsLast30Days}</td>
          <td>
            <Time value={customer.lastActivityAt} />
          </td>
          <td>
            <Time value={customer.createdAt} />
          </td>
          <td className="cell-actions">
            <button
              type="button"
              className="button button-small"
              aria-label={`Manage ${customer.email}`}
              onClick={() => props.onManage(customer.id)}
            >
              Manage
            </button>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** One customer: set their plan by hand, or stop everything they run. */
function ManageCustomer(props: { customer: Customer; onClose: () => void }) {
  const { customer } = props;
  const queryClient = useQueryClient();
  const heading = useRef<HTMLDivElement>(null);
  const [plan, setPlan] = useState<Plan>(customer.plan as Plan);
  const [status, setStatus] = useState('');
  useEffect(() => {
    heading.current?.scrollIntoView({ block: 'nearest' });
    heading.current?.focus();
  }, []);

  const setCustomerPlan = useMutation({
    mutationFn: () =>
      unwrap(
        patchV1AdminCustomersByIdPlan({ client: api, path: { id: customer.id }, body: { plan } }),
      ),
    onSuccess: async (result) => {
      setStatus(`${customer.email} is now on the ${result.plan} plan.`);
      await queryClient.invalidateQueries({ queryKey: CUSTOMERS_KEY });
      // The admin's own account may be the one changed.
      await queryClient.invalidateQueries({ queryKey: ['account'] });
      await queryClient.invalidateQueries({ queryKey: ['billing'] });
    },
  });
  const deprovision = useMutation({
    mutationFn: () =>
      unwrap(postV1AdminCustomersByIdDeprovision({ client: api, path: { id: customer.id } })),
    onSuccess: async (result) => {
      const affected = `${result.databasesAffected} database${result.databasesAffected === 1 ? '' : 's'}`;
      setStatus(
        result.ok
          ? `Deprovisioning ${customer.email}: ${affected} stopping.`
          : `Deprovisioning ${customer.email}: ${affected} stopping; some are in the middle of an action. Deprovision again once it finishes.`,
      );
      await queryClient.invalidateQueries({ queryKey: CUSTOMERS_KEY });
    },
  });
  const submitPlan = (event: FormEvent) => {
    event.preventDefault();
    setCustomerPlan.mutate();
  };

  return (
    <div ref={heading} tabIndex={-1}>
      <Panel
        title={`Manage ${customer.email}`}
        actions={
          <button type="button" className="button button-small" onClick={props.onClose}>
            Close
          </button>
        }
      >
        <p className="muted">
          Account <code>{customer.id}</code>, on {customer.plan} (up to{' '}
          {customer.planLimit.databases} databases, {customer.planLimit.computeUnits} compute
          units). Every action here lands in the customer's audit log with your identity.
        </p>
        {customer.overLimit && (
          <div className="notice notice-warn">
            Over its plan's limits: nothing is stopped, new starts are refused until usage fits.
          </div>
        )}
        <div className="grid-2">
          <form className="stack" onSubmit={submitPlan} aria-label="Change plan">
            <h3>Plan</h3>
            <SelectField
              label="New plan"
              value={plan}
              onChange={(event) => setPlan(event.target.value as Plan)}
              hint="Applies at once, without the payment provider; a later provider event (such as the subscription ending) changes it again. Overage is turned off on a plan without it."
              options={PLANS.map((value) => ({ value, label: value }))}
            />
            {setCustomerPlan.error && <ErrorNotice error={setCustomerPlan.error} />}
            <div className="row">
              <button
                type="submit"
                className="button button-primary"
                disabled={setCustomerPlan.isPending}
              >
                Change plan
              </button>
            </div>
          </form>
          <div className="stack">
            <h3>Deprovision</h3>
            <p className="muted">
              Terminates every running, paused or failed database through the reconciler and cancels
              queued starts. It neither changes the plan nor blocks new provisions.
            </p>
            {deprovision.error && <ErrorNotice error={deprovision.error} />}
            <div className="row">
              <ConfirmDialogButton
                label="Deprovision"
                pending={deprovision.isPending}
                className="button button-danger"
                title={`Deprovision ${customer.email}?`}
                confirmLabel="Yes, deprovision"
                onConfirm={() => deprovision.mutate()}
              >
                <p>
                  Every running, paused or failed database of theirs is terminated (settings, builds
                  and API keys are kept) and queued starts are cancelled. The plan does not change.
                </p>
              </ConfirmDialogButton>
            </div>
          </div>
        </div>
        <p role="status" className={status ? 'notice notice-info' : undefined}>
          {status}
        </p>
      </Panel>
    </div>
  );
}
