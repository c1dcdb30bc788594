import type { ReactNode } from 'react';
import { useEffect } from 'react';
import { errorMessage } from '../api.ts';

/** A page: its title (also the document's), optional actions on the right, then the content. */
export function Page(props: { title: string; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = `${props.title} · Replix`;
  }, [props.title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{props.title}</h1>
        {props.actions && <div className="page-actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/** A titled block inside a page. */
export function Panel(props: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="panel" aria-label={props.title}>
      <header className="panel-header">
        <h2>{props.title}</h2>
        {props.actions && <div className="panel-actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/** A failed call, in the API's own words. */
export function ErrorNotice(props: { error: unknown; title?: string }) {
  return (
    <div className="notice notice-error" role="alert">
      {props.title && <strong>{props.title}: </strong>}
      {errorMessage(props.error)}
    </div>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p className="muted" aria-live="polite" aria-busy="true">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}

/** What a list shows when it has nothing in it: what it is for and how to fill it. */
export function Empty(props: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{props.title}</p>
      {props.children && <div className="muted">{props.children}</div>}
    </div>
  );
}

/** The usual three states of a query before its data can be shown. */
export function QueryState(props: {
  query: { isPending: boolean; error: unknown };
  what: string;
}): ReactNode {
  if (props.query.error) return <ErrorNotice error={props.query.error} />;
  if (props.query.isPending) return <Loading what={props.what} />;
  return null;
}

/**
 * A list from a query: loading or why it failed, then what an empty list means (`empty`: what
 * it is for, how to fill it) or the items. A failed refresh keeps the items under its error.
 */
export function QueryList<T>(props: {
  query: { isPending: boolean; error: unknown; data: T[] | undefined };
  what: string;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  const items = props.query.data;
  return (
    <>
      <QueryState query={props.query} what={props.what} />
      {items && (items.length === 0 ? props.empty : props.children(items))}
    </>
  );
}
