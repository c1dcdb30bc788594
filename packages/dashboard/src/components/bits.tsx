import { useState } from 'react';
import { formatDateTime, formatRelative } from './date-time.ts';

const STATUS_TONES: Record<string, string> = {
  running: 'good',
  active: 'good',
  healthy: 'good',
  succeeded: 'good',
  delivered: 'good',
  ok: 'good',
  draft: 'neutral',
  paused: 'neutral',
  terminated: 'neutral',
  pending: 'neutral',
  queued: 'neutral',
  building: 'busy',
  in_progress: 'busy',
  deploying: 'busy',
  pausing: 'busy',
  terminating: 'busy',
  deleting: 'busy',
  retrying: 'busy',
  degraded: 'warn',
  cap_exceeded: 'warn',
  expired: 'warn',
  failed: 'bad',
  unhealthy: 'bad',
  unreachable: 'bad',
  error: 'bad',
};

/** A status word in a colour that says whether it is good news (the word carries the meaning). */
export function StatusBadge(props: { status: string | null | undefined }) {
  const status = props.status ?? 'unknown';
  return <span className={`badge badge-${STATUS_TONES[status] ?? 'neutral'}`}>{status}</span>;
}

/** Copies text to the clipboard and says so. */
export function CopyButton(props: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className="button button-small"
      onClick={async () => {
        await navigator.clipboard.writeText(props.text);
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

/** A secret shown once, with a copy button and a warning that it will not be shown again. */
export function SecretOnce(props: { label: string; value: string }) {
  return (
    <div className="notice notice-secret" role="status">
      <p>
        <strong>{props.label}</strong> (shown once: copy it now)
      </p>
      <div className="secret-row">
        <code className="secret">{props.value}</code>
        <CopyButton text={props.value} />
      </div>
    </div>
  );
}

/** The exact local time (`2026-11-25 14:03:07`), with "3 minutes ago" on hover. */
export function Time(props: { value: string | null | undefined }) {
  if (!props.value) return <span className="muted">never</span>;
  return (
    <time dateTime={props.value} title={formatRelative(props.value)}>
      {formatDateTime(props.value)}
    </time>
  );
}

const numberFormat = new Intl.NumberFormat();
export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : numberFormat.format(value);
}

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
