import {
  deleteV1DatabasesByIdWebhooksByWebhookId,
  getV1DatabasesByIdWebhooks,
  postV1DatabasesByIdWebhooksByWebhookIdTest,
} from '@replix/client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api.ts';
import { Time } from '../../components/bits.tsx';
import { ConfirmDeleteButton } from '../../components/confirm.tsx';
import { GuardedButton } from '../../components/guarded-button.tsx';
import { Empty, ErrorNotice, Panel, QueryList } from '../../components/page.tsx';
import { WebhookCreate, webhooksQueryKey } from '../../components/webhook-create.tsx';
import { deliveriesQueryKey, WebhookDeliveries } from '../../components/webhook-deliveries.tsx';
import { useWriteBlock } from '../../components/write-access.tsx';
import { useDatabase } from './database-layout.tsx';
import './keys-webhooks.css';

type Webhook = Awaited<ReturnType<typeof loadWebhooks>>[number];

function loadWebhooks(databaseId: string) {
  return unwrap(getV1DatabasesByIdWebhooks({ client: api, path: { id: databaseId } }));
}

/** The database's webhook subscriptions, each with its delivery history. */
export function WebhooksTab() {
  const database = useDatabase();
  const disabledReason = useWriteBlock();
  const webhooks = useQuery({
    queryKey: webhooksQueryKey(database.id),
    queryFn: () => loadWebhooks(database.id),
  });

  return (
    <div className="stack">
      <WebhookCreate databaseId={database.id} disabledReason={disabledReason} />
      <QueryList
        query={webhooks}
        what="webhooks"
        empty={
          <Empty title="No webhooks yet">
            Add one above to have {database.name}’s build and health events POSTed to your endpoint,
            signed and retried for about a day.
          </Empty>
        }
      >
        {(list) =>
          list.map((webhook) => (
            <WebhookPanel
              key={webhook.id}
              webhook={webhook}
              databaseId={database.id}
              disabledReason={disabledReason}
            />
          ))
        }
      </QueryList>
    </div>
  );
}

function WebhookPanel(props: {
  webhook: Webhook;
  databaseId: string;
  disabledReason: string | undefined;
}) {
  const { webhook, databaseId } = props;
  const queryClient = useQueryClient();
  const test = useMutation({
    mutationFn: () =>
      unwrap(
        postV1DatabasesByIdWebhooksByWebhookIdTest({
          client: api,
          path: { id: databaseId, webhookId: webhook.id },
        }),
      ),
    onSettled: () =>
      queryClient.invalidateQueries({ queryKey: deliveriesQueryKey(databaseId, webhook.id) }),
  });
  const remove = useMutation({
    mutationFn: () =>
      unwrap(
        deleteV1DatabasesByIdWebhooksByWebhookId({
          client: api,
          path: { id: databaseId, webhookId: webhook.id },
        }),
      ),
    // Only the list: the deleted webhook's deliveries would answer 404.
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: webhooksQueryKey(databaseId), exact: true }),
  });

  return (
    <Panel
      title={webhook.url}
      actions={
        <>
          <GuardedButton
            className="button button-small"
            busy={test.isPending}
            disabledReason={props.disabledReason}
            hint="Send a webhook.test event to this endpoint now."
            onClick={() => test.mutate()}
          >
            {test.isPending ? 'Sending…' : 'Send test event'}
          </GuardedButton>
          <ConfirmDeleteButton
            label="Delete"
            target={`webhook ${webhook.url}`}
            question="Delete this webhook and its delivery history? Pending deliveries are dropped."
            pending={remove.isPending}
            disabledReason={props.disabledReason}
            onConfirm={() => remove.mutate()}
          />
        </>
      }
    >
      <dl className="webhook-facts">
        <div>
          <dt>Events</dt>
          <dd>
            {webhook.eventTypes.map((type) => (
              <code key={type} className="webhook-event">
                {type}
              </code>
            ))}
          </dd>
        </div>
        {webhook.description && (
          <div>
            <dt>Description</dt>
            <dd>{webhook.description}</dd>
          </div>
        )}
        <div>
          <dt>Created</dt>
          <dd>
            <Time value={webhook.createdAt} />
          </dd>
        </div>
      </dl>
      <p className="visually-hidden" aria-live="polite">
        {test.isSuccess ? 'Test event recorded; it is sent within a second.' : ''}
      </p>
      {test.error && <ErrorNotice error={test.error} title="The test event was not sent" />}
      {remove.error && <ErrorNotice error={remove.error} title="Not deleted" />}
      <h3>Deliveries</h3>
      <WebhookDeliveries
        databaseId={databaseId}
        webhookId={webhook.id}
        disabledReason={props.disabledReason}
      />
    </Panel>
  );
}
