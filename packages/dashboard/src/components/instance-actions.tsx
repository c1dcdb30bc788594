import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useNavigate } from 'react-router';
import { ReplixApiError } from '../api.ts';
import { Time } from './bits.tsx';
import { ActionButton } from './instance-action-button.tsx';
import { ACTION_TEXT, type ActionRequest, runAction } from './instance-action-calls.ts';
import { ActionDialogs, type ConfirmedAction } from './instance-action-dialogs.tsx';
import {
  type ActionName,
  type InstanceStatus,
  invalidateDatabase,
  useBuilds,
} from './instance-queries.ts';
import { ErrorNotice, Panel } from './page.tsx';
import { useWriteBlock } from './write-access.tsx';

type Group = { title: string; actions: Array<{ name: ActionName; tone?: 'primary' | 'danger' }> };

const GROUPS: Group[] = [
  {
    title: 'Lifecycle',
    actions: [
      { name: 'provision', tone: 'primary' },
      { name: 'rebuild' },
      { name: 'reconfigure' },
      { name: 'redeploy' },
      { name: 'resize' },
      { name: 'pause' },
      { name: 'resume' },
    ],
  },
  {
    title: 'Replication',
    actions: [{ name: 'reload' }, { name: 'pause-replication' }, { name: 'resume-replication' }],
  },
  {
    title: 'Danger zone',
    actions: [
      { name: 'terminate', tone: 'danger' },
      { name: 'delete', tone: 'danger' },
    ],
  },
];

const CONFIRMED = new Set<ActionName>(['pause', 'terminate', 'delete', 'resize', 'redeploy']);

/** The action buttons of a database, its queued action, and what the last action did. */
export function InstanceActions(props: { status: InstanceStatus }) {
  const { status } = props;
  const id = status.database.id;
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const roleReason = useWriteBlock();
  const builds = useBuilds(id);
  const [dialog, setDialog] = useState<ConfirmedAction | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const mutation = useMutation({
    mutationFn: (request: ActionRequest) => runAction(id, request),
    onMutate: () => setDone(null),
    onSuccess: async (_result, request) => {
      setDone(ACTION_TEXT[request.action].accepted);
      if (request.action === 'delete') {
        queryClient.removeQueries({ queryKey: ['database', id] });
        await queryClient.invalidateQueries({ queryKey: ['databases'] });
        navigate('/databases');
        return;
      }
      await invalidateDatabase(queryClient, id);
    },
    // A refusal usually means the state moved on: show the new one beside the message.
    onError: () => invalidateDatabase(queryClient, id),
  });

  // "Pause queued: …" (or a refusal) is stale once the queued action has finished: drop it then.
  const hadGoal = useRef(status.database.goal !== null);
  const lastAction = useRef<ActionName | null>(null);
  useEffect(() => {
    const hasGoal = status.database.goal !== null;
    // A cancel also ends the goal; its "cancelled" message is the news, so it stays.
    if (hadGoal.current && !hasGoal && lastAction.current !== 'cancel-goal') {
      setDone(null);
      mutation.reset();
    }
    hadGoal.current = hasGoal;
  }, [status.database.goal, mutation.reset]);

  const run = (request: ActionRequest) => {
    setDialog(null);
    lastAction.current = request.action;
    mutation.mutate(request);
  };
  const failedAction = mutation.variables?.action;

  return (
    <Panel title="Actions">
      <GoalNotice
        status={status}
        roleReason={roleReason}
        busy={mutation.isPending}
        onCancel={() => run({ action: 'cancel-goal' })}
      />
      {GROUPS.map((group) => (
        <fieldset key={group.title} className="ops-action-group">
          <legend>{group.title}</legend>
          <div className="row">
            {group.actions.map((action) => (
              <ActionButton
                key={action.name}
                action={action.name}
                tone={action.tone}
                status={status}
                roleReason={roleReason}
                busy={mutation.isPending}
                onClick={() =>
                  CONFIRMED.has(action.name)
                    ? setDialog(action.name as ConfirmedAction)
                    : run({ action: action.name } as ActionRequest)
                }
              />
            ))}
          </div>
        </fieldset>
      ))}
      <div aria-live="polite">
        {mutation.isPending && <p className="muted">Sending…</p>}
        {done && !mutation.isPending && <p className="notice notice-info ops-feedback">{done}</p>}
      </div>
      {mutation.error && failedAction && (
        <ErrorNotice
          error={mutation.error}
          title={`${refused(mutation.error) ? 'Refused' : 'Failed'}: ${ACTION_TEXT[failedAction].label.replace('…', '')}`}
        />
      )}
      <ActionDialogs
        open={dialog}
        status={status}
        builds={builds.data}
        onRun={run}
        onClose={() => setDialog(null)}
      />
    </Panel>
  );
}

function refused(error: unknown): boolean {
  return error instanceof ReplixApiError && error.status === 409;
}

/** The action waiting for (or being carried out by) the reconciler, with its Cancel button. */
function GoalNotice(props: {
  status: InstanceStatus;
  roleReason: string | undefined;
  busy: boolean;
  onCancel: () => void;
}) {
  const goal = props.status.database.goal;
  if (!goal) return <p className="muted">No action is queued.</p>;
  return (
    <div className="notice notice-warn ops-goal">
      <p>
        <strong>{goal.claimed ? 'In progress' : 'Queued'}:</strong> {goal.action}, requested{' '}
        <Time value={goal.requestedAt} />.{' '}
        {goal.claimed
          ? 'The reconciler is carrying it out; it can no longer be cancelled.'
          : 'Waiting for the reconciler to pick it up.'}
      </p>
      <ActionButton
        action="cancel-goal"
        status={props.status}
        roleReason={props.roleReason}
        busy={props.busy}
        onClick={props.onCancel}
      />
    </div>
  );
}
