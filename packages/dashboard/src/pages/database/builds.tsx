import { getV1BuildsByIdLogs } from '@replix/client';
import { useCallback, useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { StatusBadge, Time } from '../../components/bits.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { buildDuration } from '../../components/durations.ts';
import { type Build, formatSeconds, useBuilds } from '../../components/instance-queries.ts';
import { LogTail } from '../../components/log-tail.tsx';
import { Empty, Panel, QueryList } from '../../components/page.tsx';
import { useDatabase } from './database-layout.tsx';
import './operations.css';

const BUILD_STATUS_TEXT: Record<Build['status'], string> = {
  queued: 'queued',
  in_progress: 'building',
  succeeded: 'succeeded',
  failed: 'failed',
};

function running(build: Build): boolean {
  return build.status === 'queued' || build.status === 'in_progress';
}

/** Wall-clock time of a finished build, or the time so far of a running one. */
function duration(build: Build): string {
  const took = buildDuration(build);
  if (took !== null) return took;
  if (build.status === 'in_progress' && build.startedAt) {
    return `${formatSeconds((Date.now() - Date.parse(build.startedAt)) / 1000)} so far`;
  }
  return '–';
}

/** The artifact's folder name (its full URI is in the title): the table stays narrow. */
function artifactName(uri: string): string {
  const name = uri.replace(/\/+$/, '').split('/').pop() ?? uri;
  return name.length > 12 ? `${name.slice(0, 8)}…` : name;
}

function cost(cents: number | null): string {
  return cents === null ? '–' : `$${(cents / 100).toFixed(2)}`;
}

/** Re-renders every second while `on`, so a running build's time so far moves. */
function useTicking(on: boolean): void {
  const [, setNow] = useState(0);
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [on]);
}

/** The database's builds and, for the chosen one, its log (followed while it runs). */
export function BuildsTab() {
  const database = useDatabase();
  const builds = useBuilds(database.id);
  const [params, setParams] = useSearchParams();
  const list = builds.data ?? [];
  const chosen = list.find((build) => build.id === params.get('build')) ?? list[0];
  useTicking(list.some(running));

  return (
    <QueryList
      query={builds}
      what="builds"
      empty={
        <Empty title="No builds yet">
          A build compiles the schema config against the source into the program an instance runs.
          Provision (or Rebuild) on the Overview tab starts one; it appears here with its log.
        </Empty>
      }
    >
      {() => (
        <div className="stack">
          <Panel title="Builds">
            <DataTable
              caption={`Builds of ${database.name}, newest first`}
              columns={[
                'Build',
                'Status',
                'Queued',
                'Started',
                'Duration',
                'Compute',
                { label: 'Cost', number: true },
                'Artifact',
                { label: 'Log', hidden: true },
              ]}
            >
              {list.map((build) => (
                <tr
                  key={build.id}
                  className={build.id === chosen?.id ? 'ops-row-chosen' : undefined}
                >
                  <th scope="row">
                    <code title={build.id}>{build.id.slice(0, 8)}</code>
                    {build.id === database.currentBuildId && (
                      <span className="badge badge-good ops-inline-badge">deployed</span>
                    )}
                  </th>
                  <td>
                    <StatusBadge status={BUILD_STATUS_TEXT[build.status]} />
                  </td>
                  <td>
                    <Time value={build.createdAt} />
                  </td>
                  <td>
                    <Time value={build.startedAt} />
                  </td>
                  <td>{duration(build)}</td>
                  <td>{build.computeTypeUsed ?? '–'}</td>
                  <td className="number">{cost(build.costEstimateCents)}</td>
                  <td className="ops-artifact">
                    {build.imageUri ? (
                      <code title={build.imageUri}>{artifactName(build.imageUri)}</code>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                  <td>
                    <button
                      type="button"
                      className="button button-small"
                      aria-pressed={build.id === chosen?.id}
                      aria-label={`View log of build ${build.id.slice(0, 8)}`}
                      onClick={() => setParams({ build: build.id }, { replace: true })}
                    >
                      View log
                    </button>
                  </td>
                </tr>
              ))}
            </DataTable>
          </Panel>
          {chosen && <BuildLog build={chosen} />}
        </div>
      )}
    </QueryList>
  );
}

function BuildLog(props: { build: Build }) {
  const { build } = props;
  const load = useCallback(
    (token: string | undefined) =>
      unwrap(
        getV1BuildsByIdLogs({ client: api, path: { id: build.id }, query: { nextToken: token } }),
      ),
    [build.id],
  );
  return (
    <LogTail
      title="Build log"
      subtitle={
        <>
          Build <code>{build.id.slice(0, 8)}</code>, {BUILD_STATUS_TEXT[build.status]}
          {running(build) ? ' (followed while it runs)' : ''}
        </>
      }
      load={load}
      resetKey={build.id}
      stopWhenDone
      doneText="The build has finished; this is its whole log."
      empty={
        build.status === 'queued'
          ? 'The build is waiting for a builder; its log starts when one picks it up.'
          : 'This build wrote no log line.'
      }
    />
  );
}
