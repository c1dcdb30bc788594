import { postV1DatabasesByIdWebhooks } from '@replix/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { Checkbox, TextField } from './fields.tsx';
import { GuardedButton } from './guarded-button.tsx';
import { ErrorNotice, Panel } from './page.tsx';
import { StoredSecret } from './stored-secret.tsx';
import { ReadOnlyNotice } from './write-access.tsx';

/** The four subscribable platform events (docs/control-plane/webhooks.md). */
export const WEBHOOK_EVENTS = [
  { type: 'build.completed', fires: 'a provision or rebuild is built, deployed and running' },
  { type: 'build.failed', fires: 'the build of a provision or rebuild fails' },
  { type: 'instance.unhealthy', fires: 'a running instance stops being healthy' },
  { type: 'instance.recovered', fires: 'an unhealthy instance is healthy again' },
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number]['type'];

export function webhooksQueryKey(databaseId: string) {
  return ['webhooks', databaseId] as const;
}

/** New subscription: where to, which events; its signing secret is shown once. */
export function WebhookCreate(props: { databaseId: string; disabledReason: string | undefined }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>(WEBHOOK_EVENTS.map((e) => e.type));
  const [created, setCreated] = useState<{
    url: string;
    secret: string;
    standardWebhooksSecret: string;
  } | null>(null);
  const queryClient = useQueryClient();
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        postV1DatabasesByIdWebhooks({
          client: api,
          path: { id: props.databaseId },
          body: {
            url: url.trim(),
            eventTypes: events,
            ...(description.trim() ? { description: description.trim() } : {}),
          },
        }),
      ),
    onSuccess: (made) => {
      setCreated({
        url: made.url,
        secret: made.secret,
        standardWebhooksSecret: made.standardWebhooksSecret,
      });
      setUrl('');
      setDescription('');
      queryClient.invalidateQueries({ queryKey: webhooksQueryKey(props.databaseId), exact: true });
    },
  });
  const disabled = Boolean(props.disabledReason);

  function toggle(type: WebhookEventType, on: boolean) {
    setEvents((current) =>
      on
        ? WEBHOOK_EVENTS.map((e) => e.type).filter((t) => t === type || current.includes(t))
        : current.filter((t) => t !== type),
    );
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (url.trim() && events.length > 0) create.mutate();
  }

  return (
    <Panel title="Add a webhook">
      {created && (
        <StoredSecret
          label={`Signing secret for ${created.url}`}
          value={created.secret}
          onStored={() => setCreated(null)}
        >
          <p className="muted">
            Verify each request’s <code>X-Service-Signature</code> with it: the HMAC-SHA256 of{' '}
            <code>&lt;t&gt;.&lt;body&gt;</code>, keyed with this secret.
          </p>
          <p className="muted">
            The same secret for Standard Webhooks libraries (the <code>webhook-signature</code>{' '}
            header):{' '}
            <code className="webhook-standard-secret">{created.standardWebhooksSecret}</code>
          </p>
        </StoredSecret>
      )}
      <ReadOnlyNotice reason={props.disabledReason} />
      <form className="stack" onSubmit={submit}>
        <div className="form-grid">
          <TextField
            label="Endpoint URL"
            type="url"
            inputMode="url"
            placeholder="https://hooks.example.com/replix"
            required
            value={url}
            disabled={disabled}
            hint="https, on a public address. Events are POSTed there as signed JSON."
            onChange={(event) => setUrl(event.target.value)}
          />
          <TextField
            label="Description (optional)"
            maxLength={500}
            value={description}
            disabled={disabled}
            onChange={(event) => setDescription(event.target.value)}
          />
        </div>
        <fieldset className="webhook-events" disabled={disabled}>
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((event) => (
            <div key={event.type} className="webhook-event-choice">
              <Checkbox
                label={event.type}
                checked={events.includes(event.type)}
                onChange={(on) => toggle(event.type, on)}
              />
              <span className="muted">when {event.fires}</span>
            </div>
          ))}
          {events.length === 0 && <p className="field-error">Choose at least one event.</p>}
        </fieldset>
        <div>
          <GuardedButton
            type="submit"
            className="button button-primary"
            disabledReason={props.disabledReason}
            busy={create.isPending}
            disabled={url.trim() === '' || events.length === 0}
          >
            {create.isPending ? 'Adding…' : 'Add webhook'}
          </GuardedButton>
        </div>
      </form>
      {create.error && <ErrorNotice error={create.error} title="The webhook was not added" />}
    </Panel>
  );
}
