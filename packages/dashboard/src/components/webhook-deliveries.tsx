import {
  getV1DatabasesByIdWebhooksByWebhookIdDeliveries,
  postV1DatabasesByIdWebhooksByWebhookIdDeliveriesByDeliveryIdRetry,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { StatusBadge, Time } from './bits.tsx';
import { ACTIONS, DataTable } from './data-table.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { Empty, ErrorNotice, QueryList } from './page.tsx';

type Delivery = Awaited<ReturnType<typeof loadDeliveries>>[number];

function loadDeliveries(databaseId: string, webhookId: string) {
  return unwrap(
    getV1DatabasesByIdWebhooksByWebhookIdDeliveries({
      client: api,
      path: { id: databaseId, webhookId },
    }),
  );
}

export function deliveriesQueryKey(databaseId: string, webhookId: string) {
  return ['webhooks', databaseId, webhookId, 'deliveries'] as const;
}

/** A subscription's last 50 deliveries, newest first; polled faster while some are under way. */
export function WebhookDeliveries(props: {
  databaseId: string;
  webhookId: string;
  disabledReason: string | undefined;
}) {
  const deliveries = useQuery({
    queryKey: deliveriesQueryKey(props.databaseId, props.webhookId),
    queryFn: () => loadDeliveries(props.databaseId, props.webhookId),
    refetchInterval: (query) =>
      query.state.data?.some((d) => d.status === 'pending' || d.status === 'retrying')
        ? 2000
        : 15_000,
  });
  return (
    <QueryList
      query={deliveries}
      what="deliveries"
      empty={
        <Empty title="No deliveries yet">
          Events this webhook subscribes to are listed here as they are sent. Send a test event to
          try the endpoint.
        </Empty>
      }
    >
      {(list) => (
        <DataTable
          caption="Deliveries, newest first"
          wrapClassName="webhook-deliveries"
          columns={[
            'Event',
            'Status',
            { label: 'Attempts', number: true },
            'Last response',
            'Last attempt',
            'Next attempt',
            'Created',
            ACTIONS,
          ]}
        >
          {list.map((delivery) => (
            <DeliveryRow
              key={delivery.id}
              delivery={delivery}
              databaseId={props.databaseId}
              webhookId={props.webhookId}
              disabledReason={props.disabledReason}
            />
          ))}
        </DataTable>
      )}
    </QueryList>
  );
}

function DeliveryRow(props: {
  delivery: Delivery;
  databaseId: string;
  webhookId: string;
  disabledReason: string | undefined;
}) {
  const { delivery } = props;
  const queryClient = useQueryClient();
  const retry = useMutation({
    mutationFn: () =>
      unwrap(
        postV1DatabasesByIdWebhooksByWebhookIdDeliveriesByDeliveryIdRetry({
          client: api,
          path: { id: props.databaseId, webhookId: props.webhookId, deliveryId: delivery.id },
        }),
      ),
    onSettled: () =>
      queryClient.invalidateQueries({
        queryKey: deliveriesQueryKey(props.databaseId, props.webhookId),
      }),
  });
  const canRetry = delivery.status !== 'delivered';
  const [open, setOpen] = useState(false);
  const detailsId = useId();
  return (
    <>
      <tr>
        <td>
          <code>{delivery.eventType}</code>
        </td>
        <td>
          <StatusBadge status={delivery.status} />
        </td>
        <td className="number">{delivery.attemptCount}</td>
        <td className="webhook-response">
          {delivery.lastStatusCode !== undefined && <span>HTTP {delivery.lastStatusCode}</span>}
          {delivery.lastError && <span className="webhook-error"> {delivery.lastError}</span>}
          {delivery.lastStatusCode === undefined && !delivery.lastError && (
            <span className="muted">–</span>
          )}
        </td>
        <td className="webhook-time">
          <Time value={delivery.lastAttemptAt} />
        </td>
        <td className="webhook-time">
          {delivery.nextAttemptAt ? (
            <Time value={delivery.nextAttemptAt} />
          ) : (
            <span className="muted">–</span>
          )}
        </td>
        <td className="webhook-time">
          <Time value={delivery.createdAt} />
        </td>
        <td className="cell-actions">
          <button
            type="button"
            className="button button-small"
            aria-expanded={open}
            aria-controls={detailsId}
            onClick={() => setOpen(!open)}
          >
            Attempts
          </button>{' '}
          {canRetry && (
            <GuardedButton
              className="button button-small"
              busy={retry.isPending}
              disabledReason={props.disabledReason}
              hint={
                delivery.status === 'failed'
                  ? 'Make one more attempt now.'
                  : 'Bring the next attempt forward to now.'
              }
              onClick={() => retry.mutate()}
            >
              {retry.isPending ? 'Retrying…' : delivery.status === 'failed' ? 'Retry' : 'Retry now'}
            </GuardedButton>
          )}
          {retry.error && <ErrorNotice error={retry.error} />}
        </td>
      </tr>
      <tr id={detailsId} hidden={!open} className="webhook-details-row">
        <td colSpan={8}>
          <p className="muted">
            Event id <code>{delivery.eventId}</code> (the <code>X-Service-Event-Id</code> header,
            the same on every attempt)
          </p>
          <Attempts attempts={delivery.attempts} />
        </td>
      </tr>
    </>
  );
}

function Attempts(props: { attempts: Delivery['attempts'] }) {
  if (props.attempts.length === 0) return <p className="muted">No attempt yet.</p>;
  return (
    <table className="table webhook-attempts-table">
      <caption className="visually-hidden">Attempts, newest first</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">When</th>
          <th scope="col">Result</th>
          <th scope="col" className="number">
            Took
          </th>
        </tr>
      </thead>
      <tbody>
        {props.attempts.map((attempt) => (
          <tr key={attempt.attempt}>
            <td>{attempt.attempt}</td>
            <td>
              <Time value={attempt.attemptedAt} />
            </td>
            <td>
              {attempt.succeeded ? 'delivered' : 'failed'}
              {attempt.statusCode !== undefined && ` (HTTP ${attempt.statusCode})`}
              {attempt.error && <span className="webhook-error"> {attempt.error}</span>}
            </td>
            <td className="number">{attempt.durationMs} ms</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
