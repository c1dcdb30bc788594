import { getV1AccountAuditLog, getV1Databases, getV1DatabasesByIdAuditLog } from '@replix/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Fragment, useId, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, unwrap } from '../api.ts';
import { auditEventTypes } from './audit-event-types.ts';
import { formatNumber, Time } from './bits.tsx';
import { DataTable } from './data-table.tsx';
import { formatRelative } from './date-time.ts';
import { SelectField, TextField } from './fields.tsx';
import { Empty, QueryState } from './page.tsx';
import './audit-log.css';

const PAGE_SIZES = ['25', '50', '100'] as const;
type PageSize = (typeof PAGE_SIZES)[number];

/** What the log shows: the whole account's, or one database's. */
export type AuditScope = { kind: 'account' } | { kind: 'database'; databaseId: string };

interface AuditFilter {
  eventType: string;
  after: string;
  before: string;
  databaseId: string;
  limit: PageSize;
  offset: number;
}

interface AuditRow {
  id: string;
  entityType: string;
  entityId: string;
  entityName?: string;
  eventType: string;
  payload?: { [key: string]: unknown };
  createdAt: string;
  actor?: { type: 'user' | 'management_key' | 'system'; id?: string; name: string };
  databaseId?: string;
  databaseName?: string;
}

/** The filters live in the address, so a filtered view can be reloaded, shared, gone back to. */
function useAuditFilter() {
  const [params, setParams] = useSearchParams();
  const limit = params.get('limit');
  const filter: AuditFilter = {
    eventType: params.get('eventType') ?? '',
    after: params.get('after') ?? '',
    before: params.get('before') ?? '',
    databaseId: params.get('databaseId') ?? '',
    limit: PAGE_SIZES.find((size) => size === limit) ?? '25',
    offset: Math.max(0, Number.parseInt(params.get('offset') ?? '0', 10) || 0),
  };
  function update(change: Partial<AuditFilter>) {
    // A new filter starts at the first page; paging keeps the filter.
    const next = { ...filter, offset: 0, ...change };
    const search = new URLSearchParams();
    if (next.eventType) search.set('eventType', next.eventType);
    if (next.after) search.set('after', next.after);
    if (next.before) search.set('before', next.before);
    if (next.databaseId) search.set('databaseId', next.databaseId);
    if (next.limit !== '25') search.set('limit', next.limit);
    if (next.offset > 0) search.set('offset', String(next.offset));
    setParams(search, { replace: true });
  }
  return [filter, update] as const;
}

async function loadPage(
  scope: AuditScope,
  filter: AuditFilter,
): Promise<{ events: AuditRow[]; total: number }> {
  const query = {
    limit: filter.limit,
    ...(filter.offset > 0 ? { offset: String(filter.offset) } : {}),
    ...(filter.eventType ? { eventType: filter.eventType } : {}),
    ...(filter.after ? { after: filter.after } : {}),
    ...(filter.before ? { before: filter.before } : {}),
  };
  if (scope.kind === 'database') {
    return unwrap(
      getV1DatabasesByIdAuditLog({ client: api, path: { id: scope.databaseId }, query }),
    );
  }
  return unwrap(
    getV1AccountAuditLog({
      client: api,
      query: { ...query, ...(filter.databaseId ? { databaseId: filter.databaseId } : {}) },
    }),
  );
}

/** The audit log: filters, one page of events (newest first), and paging. */
export function AuditLog(props: { scope: AuditScope }) {
  const { scope } = props;
  const [filter, update] = useAuditFilter();
  const log = useQuery({
    queryKey: [
      'audit-log',
      scope.kind === 'database' ? scope.databaseId : 'account',
      filter,
    ] as const,
    queryFn: () => loadPage(scope, filter),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
  const filtered = Boolean(filter.eventType || filter.after || filter.before || filter.databaseId);

  return (
    <div className="stack">
      <AuditFilters scope={scope} filter={filter} update={update} filtered={filtered} />
      {!log.data ? (
        <QueryState query={log} what="the audit log" />
      ) : (
        <>
          {log.error && <QueryState query={log} what="the audit log" />}
          <AuditPager
            total={log.data.total}
            filter={filter}
            update={update}
            busy={log.isFetching}
          />
          {log.data.events.length === 0 ? (
            <Empty title={filtered ? 'No events match these filters' : 'No events yet'}>
              {filtered
                ? 'Change or clear the filters to see more.'
                : 'Every change to your resources is recorded here as it happens.'}
            </Empty>
          ) : (
            <AuditTable events={log.data.events} showDatabase={scope.kind === 'account'} />
          )}
          {log.data.events.length > 0 && (
            <AuditPager
              total={log.data.total}
              filter={filter}
              update={update}
              busy={log.isFetching}
              bottom
            />
          )}
        </>
      )}
    </div>
  );
}

/** `2026-05-01T12:00:00.000Z` ⇄ the `YYYY-MM-DDTHH:mm` of a datetime-local input, local time. */
function toLocalInput(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}
function fromLocalInput(value: string): string {
  const date = new Date(value);
  return value && !Number.isNaN(date.getTime()) ? date.toISOString() : '';
}

function AuditFilters(props: {
  scope: AuditScope;
  filter: AuditFilter;
  update: (change: Partial<AuditFilter>) => void;
  filtered: boolean;
}) {
  const { filter, update } = props;
  const databases = useQuery({
    queryKey: ['databases'],
    queryFn: () => unwrap(getV1Databases({ client: api })),
    enabled: props.scope.kind === 'account',
  });
  const types = auditEventTypes(props.scope.kind);
  return (
    <form
      className="audit-filters"
      aria-label="Audit log filters"
      onSubmit={(event) => event.preventDefault()}
    >
      <SelectField
        label="Event type"
        value={filter.eventType}
        options={[
          { value: '', label: 'All event types' },
          // A type from the address that the list does not know still shows as chosen.
          ...(filter.eventType && !types.includes(filter.eventType)
            ? [{ value: filter.eventType, label: filter.eventType }]
            : []),
          ...types.map((type) => ({ value: type, label: type })),
        ]}
        onChange={(event) => update({ eventType: event.target.value })}
      />
      {props.scope.kind === 'account' && (
        <SelectField
          label="Database"
          value={filter.databaseId}
          options={[
            { value: '', label: 'All' },
            ...(filter.databaseId && !databases.data?.some((d) => d.id === filter.databaseId)
              ? [{ value: filter.databaseId, label: filter.databaseId }]
              : []),
            ...(databases.data ?? []).map((d) => ({ value: d.id, label: d.name })),
          ]}
          onChange={(event) => update({ databaseId: event.target.value })}
        />
      )}
      <TextField
        label="After"
        type="datetime-local"
        value={toLocalInput(filter.after)}
        hint="Your local time"
        onChange={(event) => update({ after: fromLocalInput(event.target.value) })}
      />
      <TextField
        label="Before"
        type="datetime-local"
        value={toLocalInput(filter.before)}
        hint="Your local time"
        onChange={(event) => update({ before: fromLocalInput(event.target.value) })}
      />
      <SelectField
        label="Events per page"
        value={filter.limit}
        options={PAGE_SIZES.map((size) => ({ value: size, label: size }))}
        onChange={(event) => update({ limit: event.target.value as PageSize })}
      />
      <div className="audit-filters-actions">
        <button
          type="button"
          className="button"
          disabled={!props.filtered}
          onClick={() => update({ eventType: '', after: '', before: '', databaseId: '' })}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function AuditPager(props: {
  total: number;
  filter: AuditFilter;
  update: (change: Partial<AuditFilter>) => void;
  busy: boolean;
  bottom?: boolean;
}) {
  const size = Number(props.filter.limit);
  const { offset } = props.filter;
  const first = props.total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + size, props.total);
  const summary =
    props.total === 0
      ? 'No events'
      : `Events ${formatNumber(first)}–${formatNumber(last)} of ${formatNumber(props.total)}`;
  return (
    <nav
      className="audit-pager"
      aria-label={props.bottom ? 'Audit log pages (bottom)' : 'Audit log pages'}
    >
      <span aria-live={props.bottom ? undefined : 'polite'}>
        {summary}
        {props.busy && <span className="muted"> · updating…</span>}
      </span>
      <span className="row">
        <button
          type="button"
          className="button button-small"
          disabled={offset === 0}
          onClick={() => props.update({ offset: Math.max(0, offset - size) })}
        >
          Newer
        </button>
        <button
          type="button"
          className="button button-small"
          disabled={offset + size >= props.total}
          onClick={() => props.update({ offset: offset + size })}
        >
          Older
        </button>
      </span>
    </nav>
  );
}

function AuditTable(props: { events: AuditRow[]; showDatabase: boolean }) {
  const columns = props.showDatabase ? 6 : 5;
  return (
    <DataTable
      caption="Audit events, newest first"
      className="audit-table"
      wrapClassName="audit-table-wrap"
      columns={['Time', 'Event', 'Actor', 'Entity', props.showDatabase && 'Database', 'Details']}
    >
      {props.events.map((event) => (
        <AuditEventRow
          key={event.id}
          event={event}
          showDatabase={props.showDatabase}
          columns={columns}
        />
      ))}
    </DataTable>
  );
}

function AuditEventRow(props: { event: AuditRow; showDatabase: boolean; columns: number }) {
  const { event } = props;
  const [open, setOpen] = useState(false);
  const payloadId = useId();
  const hasPayload = event.payload !== undefined && Object.keys(event.payload).length > 0;
  return (
    <Fragment>
      <tr>
        <td className="audit-time">
          <Time value={event.createdAt} />
          <div className="muted">{formatRelative(event.createdAt)}</div>
        </td>
        <td>
          <code>{event.eventType}</code>
        </td>
        <td>
          <AuditActor actor={event.actor} />
        </td>
        <td>
          {event.entityType}{' '}
          {event.entityName ? (
            <span title={event.entityId}>“{event.entityName}”</span>
          ) : (
            <code className="muted audit-id" title={event.entityId}>
              {event.entityId.slice(0, 8)}
            </code>
          )}
        </td>
        {props.showDatabase && (
          <td>
            {event.databaseId ? (
              <Link to={`/databases/${event.databaseId}`}>
                {event.databaseName ?? event.databaseId.slice(0, 8)}
              </Link>
            ) : (
              <span className="muted">–</span>
            )}
          </td>
        )}
        <td>
          {hasPayload ? (
            <button
              type="button"
              className="button button-small"
              aria-expanded={open}
              aria-controls={payloadId}
              onClick={() => setOpen(!open)}
            >
              {open ? 'Hide payload' : 'Show payload'}
              <span className="visually-hidden"> of {event.eventType}</span>
            </button>
          ) : (
            <span className="muted">–</span>
          )}
        </td>
      </tr>
      {hasPayload && (
        <tr id={payloadId} hidden={!open} className="audit-payload-row">
          <td colSpan={props.columns}>
            <pre className="code-block">{JSON.stringify(event.payload, null, 2)}</pre>
          </td>
        </tr>
      )}
    </Fragment>
  );
}

/** Who made the change: a user's email, a management key by name, or the system. */
function AuditActor(props: { actor: AuditRow['actor'] }) {
  const { actor } = props;
  if (!actor) return <span className="muted">–</span>;
  if (actor.type === 'management_key') return <>key “{actor.name}”</>;
  if (actor.type === 'system') return <span className="muted">system</span>;
  return <>{actor.name}</>;
}
