import { Link } from 'react-router';
import { CopyButton, formatNumber, StatusBadge, Time } from './bits.tsx';
import { DataTable } from './data-table.tsx';
import { buildDuration } from './durations.ts';
import { ACTION_TEXT } from './instance-action-calls.ts';
import { formatSeconds, type InstanceStatus } from './instance-queries.ts';
import { Panel } from './page.tsx';

const HEALTH_TONES: Record<string, string> = {
  ok: 'good',
  degraded: 'warn',
  unreachable: 'bad',
  cap_exceeded: 'bad',
};

const HEALTH_TEXT: Record<string, string> = {
  ok: 'ok',
  degraded: 'degraded',
  unreachable: 'unreachable',
  cap_exceeded: 'over memory cap',
};

function HealthBadge(props: { health: string | null | undefined }) {
  if (!props.health) return <span className="badge badge-neutral">not checked yet</span>;
  return (
    <span className={`badge badge-${HEALTH_TONES[props.health] ?? 'neutral'}`}>
      {HEALTH_TEXT[props.health] ?? props.health}
    </span>
  );
}

/** The first action that can repair a failed database, as the action buttons name it. */
const REPAIRS = ['reconfigure', 'rebuild', 'provision'] as const;

function WayOut(props: { status: InstanceStatus }) {
  const repair = REPAIRS.find((action) => props.status.allowedActions[action].allowed);
  if (!repair) return null;
  return <p>Next step: fix what the error names, then click {ACTION_TEXT[repair].label} below.</p>;
}

/** The live instance at a glance: status, health, sizes, URL, replication, build, error. */
export function InstanceSummary(props: { status: InstanceStatus }) {
  const { database, instance, deployedInstanceConfig: config, latestBuild } = props.status;
  // The database's endpoint outlives its instances: shown while paused or terminated too.
  const endpointUrl = database.endpointUrl ?? instance?.endpointUrl;
  const health = instance?.healthStatus;
  // A build can succeed and its deploy fail: the build's badge alone would hide that.
  const deployFailed = database.status === 'failed' && latestBuild?.status === 'succeeded';
  return (
    <Panel title="Instance">
      {/* Announced only when the status or health changes, not on every poll. */}
      <p className="visually-hidden" role="status">
        Status {database.status}
        {instance ? `, health ${HEALTH_TEXT[health ?? ''] ?? 'not checked yet'}` : ', no instance'}
        {database.goal
          ? `, ${database.goal.action} ${database.goal.claimed ? 'in progress' : 'queued'}`
          : ''}
        .
      </p>
      {database.lastError && (
        <div className="notice notice-error">
          <strong>Last error:</strong> <span className="ops-pre">{database.lastError}</span>
          {database.status === 'failed' && <WayOut status={props.status} />}
        </div>
      )}
      {props.status.pendingChanges.length > 0 && (
        <div className="notice notice-info">
          Changed since this instance was deployed:{' '}
          {props.status.pendingChanges
            .map(
              (change) =>
                `${change.setting === 'schema' ? 'schema config' : change.setting} (${change.appliedBy === 'rebuild' ? 'Rebuild' : 'Reconfigure'} applies it)`,
            )
            .join(', ')}
          .
        </div>
      )}
      <dl className="stats">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={database.status} />
          </dd>
        </div>
        <div>
          <dt>Health</dt>
          <dd>
            {instance ? (
              <HealthBadge health={health} />
            ) : (
              <span className="muted">no instance</span>
            )}
          </dd>
        </div>
        <div>
          <dt>Snapshot age</dt>
          <dd>
            {formatSeconds(instance?.snapshotAgeMs == null ? null : instance.snapshotAgeMs / 1000)}
          </dd>
        </div>
        <div>
          <dt>Swaps</dt>
          <dd>{formatNumber(instance?.swapCount)}</dd>
        </div>
        <div>
          <dt>Replicas</dt>
          <dd>
            {instance ? instance.replicaCount : config.replicas}{' '}
            {instance && instance.replicaCount > 1 && (
              <span className="ops-small">
                {instance.replicas.map((replica) => (
                  <span key={replica.ordinal} title={`replica ${replica.ordinal}`}>
                    <HealthBadge health={replica.healthStatus} />{' '}
                  </span>
                ))}
              </span>
            )}
          </dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>
            {config.instanceSize}{' '}
            <span className="ops-small muted">
              {formatNumber(config.taskMemoryMb)} MB, {config.taskCpu} vCPU
            </span>
          </dd>
        </div>
        <div>
          <dt>Sync</dt>
          <dd>
            {config.syncMode}{' '}
            <span className="ops-small muted">every {formatSeconds(config.syncInterval)}</span>
          </dd>
        </div>
        <div>
          <dt>Replication</dt>
          <dd>{database.replicationPaused ? 'paused' : 'active'}</dd>
        </div>
        <div>
          <dt>Last health check</dt>
          <dd>
            <Time value={instance?.lastHealthCheck} />
          </dd>
        </div>
      </dl>
      <div className="ops-url">
        <span className="ops-label">Instance URL</span>
        {endpointUrl ? (
          <span className="row">
            <code>{endpointUrl}</code>
            <CopyButton text={endpointUrl} label="Copy URL" />
            {!instance && (
              <span className="muted">
                No instance serves it now: queries get 503 until one does.
              </span>
            )}
          </span>
        ) : (
          <span className="muted">Not deployed yet, so there is no URL to query.</span>
        )}
      </div>
      <div className="ops-url">
        <span className="ops-label">Latest build</span>
        {latestBuild ? (
          <span className="row">
            <StatusBadge status={latestBuild.status} />
            {deployFailed && <strong>but its deploy failed (see Last error)</strong>}
            <span>
              started <Time value={latestBuild.startedAt ?? latestBuild.createdAt} />
              {buildDuration(latestBuild) !== null && `, took ${buildDuration(latestBuild)}`}
            </span>
            <Link to={`builds?build=${latestBuild.id}`}>Build log</Link>
          </span>
        ) : (
          <span className="muted">None yet: Provision builds the database.</span>
        )}
      </div>
    </Panel>
  );
}

/** Rows per table at the last health check. */
export function InstanceRowCounts(props: { status: InstanceStatus }) {
  const counts = Object.entries(props.status.instance?.rowCounts ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const total = counts.reduce((sum, [, rows]) => sum + rows, 0);
  return (
    <Panel title="Tables">
      {counts.length === 0 ? (
        <p className="muted">
          {props.status.instance
            ? 'Row counts appear after the first health check.'
            : 'Row counts appear once an instance runs.'}
        </p>
      ) : (
        <DataTable
          caption="Rows per table"
          columns={['Table', { label: 'Rows', number: true }]}
          foot={
            <tr>
              <th scope="row">Total</th>
              <td className="number">{formatNumber(total)}</td>
            </tr>
          }
        >
          {counts.map(([table, rows]) => (
            <tr key={table}>
              <th scope="row">
                <code>{table}</code>
              </th>
              <td className="number">{formatNumber(rows)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </Panel>
  );
}
