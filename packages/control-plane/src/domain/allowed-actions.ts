import { ACTIONS, type Action, type DatabaseStatus } from './database-lifecycle.ts';
import type { Goal } from './goal.ts';
import { INSTANCE_SIZE_NAMES, type Plan, type PlanLimits, planLimits } from './plans.ts';

/** How an action is carried out: now, in the request, or later by the reconciler. */
export type ActionMode = 'immediate' | 'queued';

/** Spec §2 ActionAvailability: `reason` is present exactly when `allowed` is false. */
export interface ActionAvailability {
  readonly allowed: boolean;
  readonly mode: ActionMode;
  readonly reason?: string;
}

export type AllowedActions = Record<Action, ActionAvailability>;

export interface AllowedActionsInput {
  readonly status: DatabaseStatus;
  /** The queued or in-progress goal; `claimedAt` set means the reconciler has started it. */
  readonly goal: Goal | null;
  readonly plan: Plan;
  /** The database has at least one succeeded build (something to deploy). */
  readonly hasBuild: boolean;
  /**
   * A deploy has succeeded at least once (`current_build_id` is set). A database that failed
   * without ever being deployed can be provisioned again.
   */
  readonly hasDeployment: boolean;
  readonly replicationPaused: boolean;
}

/** Statuses with something deployed (or once deployed) that can be acted on. */
const SETTLED_WITH_INSTANCE: readonly DatabaseStatus[] = ['running', 'paused', 'failed'];

/** Statuses a goal passes through; nothing but cancel-goal may start while one lasts. */
const TRANSITIONAL: readonly DatabaseStatus[] = [
  'building',
  'deploying',
  'pausing',
  'terminating',
  'deleting',
];

function listStatuses(statuses: readonly DatabaseStatus[]): string {
  if (statuses.length === 1) return statuses[0] as string;
  return `${statuses.slice(0, -1).join(', ')} or ${statuses.at(-1)}`;
}

const LABELS: Record<Action, string> = {
  provision: 'Provision',
  rebuild: 'Rebuild',
  reconfigure: 'Reconfigure',
  redeploy: 'Redeploy',
  resize: 'Resize',
  pause: 'Pause',
  resume: 'Resume',
  terminate: 'Terminate',
  delete: 'Delete',
  reload: 'Reload',
  'pause-replication': 'Pause replication',
  'resume-replication': 'Resume replication',
  'cancel-goal': 'Cancel',
};

/**
 * The allowed-actions matrix (spec §2 AllowedActions): which actions a database accepts now,
 * how each is carried out, and why not when it is refused. One pure function of the database's
 * status, its pending goal and the account's plan, so the API, the dashboard and the tests
 * agree. docs/control-plane/lifecycle.md has the same rules as a table.
 */
export function allowedActions(input: AllowedActionsInput): AllowedActions {
  return allowedActionsWithLimits(input, planLimits(input.plan));
}

/** The matrix under explicit plan limits (custom contracts; tests of limits no plan has yet). */
export function allowedActionsWithLimits(
  input: Omit<AllowedActionsInput, 'plan'>,
  limits: PlanLimits,
): AllowedActions {
  const { status, goal, hasBuild, hasDeployment, replicationPaused } = input;

  /** Why nothing but cancel-goal may start now, or undefined when the database is settled. */
  function busyReason(): string | undefined {
    if (goal && !goal.claimedAt)
      return `Another action is queued: ${goal.action}. Cancel it first.`;
    if (goal)
      return `The database is ${status} (${goal.action} in progress); wait until it finishes.`;
    if (TRANSITIONAL.includes(status)) return `The database is ${status}; wait until it finishes.`;
    return undefined;
  }
  const busy = busyReason();

  /** An action allowed in `statuses` when nothing is pending and `extra` raises no objection. */
  function rule(
    action: Action,
    mode: ActionMode,
    statuses: readonly DatabaseStatus[],
    extra?: () => string | undefined,
  ): ActionAvailability {
    if (busy) return { allowed: false, mode, reason: busy };
    if (!statuses.includes(status)) {
      const needs = `${LABELS[action]} needs a ${listStatuses(statuses)} database`;
      const instead = insteadOf(action, status, hasBuild);
      return {
        allowed: false,
        mode,
        reason: instead
          ? `${needs}; this one is ${status}: use ${LABELS[instead]} instead.`
          : `${needs}; this one is ${status} already: there is nothing to ${action}.`,
      };
    }
    const objection = extra?.();
    return objection ? { allowed: false, mode, reason: objection } : { allowed: true, mode };
  }

  const needsBuild = (): string | undefined =>
    hasBuild ? undefined : 'The database has no successful build yet: use Rebuild instead.';

  // Delete tears down a deployment first (queued) unless there has never been one to tear down.
  const deleteMode: ActionMode =
    status === 'running' || status === 'paused' || (status === 'failed' && hasBuild)
      ? 'queued'
      : 'immediate';

  // A failed first deploy (nothing ever served) may start over as it began.
  const provisionable: DatabaseStatus[] = hasDeployment
    ? ['draft', 'terminated']
    : ['draft', 'terminated', 'failed'];

  const matrix: AllowedActions = {
    provision: rule('provision', 'queued', provisionable),
    rebuild: rule('rebuild', 'queued', SETTLED_WITH_INSTANCE),
    reconfigure: rule('reconfigure', 'queued', SETTLED_WITH_INSTANCE, needsBuild),
    redeploy: rule('redeploy', 'queued', SETTLED_WITH_INSTANCE, needsBuild),
    resize: rule('resize', 'queued', SETTLED_WITH_INSTANCE, () => {
      if (limits.maxInstanceSize === INSTANCE_SIZE_NAMES[0] && limits.maxReplicas === 1) {
        return `Your plan allows only the ${limits.maxInstanceSize} size and one replica; upgrade to resize.`;
      }
      return needsBuild();
    }),
    pause: rule('pause', 'queued', ['running']),
    resume: rule('resume', 'queued', ['paused']),
    terminate: rule('terminate', 'queued', SETTLED_WITH_INSTANCE),
    delete: rule('delete', deleteMode, ['draft', 'running', 'paused', 'failed', 'terminated']),
    reload: rule('reload', 'immediate', ['running']),
    'pause-replication': rule('pause-replication', 'immediate', ['running'], () =>
      replicationPaused
        ? 'Replication is already paused: use Resume replication instead.'
        : undefined,
    ),
    'resume-replication': rule('resume-replication', 'immediate', ['running'], () =>
      replicationPaused ? undefined : 'Replication is not paused: use Pause replication instead.',
    ),
    'cancel-goal': cancelGoal(goal),
  };
  return Object.fromEntries(ACTIONS.map((action) => [action, matrix[action]])) as AllowedActions;
}

/**
 * The action to use instead of `action` in a status that does not allow it: the one that gets
 * the database to where `action` was meant to take it, or repairs it first; null when the
 * database is where `action` would take it already (a resume of a running one).
 */
function insteadOf(action: Action, status: DatabaseStatus, hasBuild: boolean): Action | null {
  if (status === 'draft' || status === 'terminated') {
    // Nothing is deployed: provision, or delete what there is no deployment of to remove.
    return action === 'terminate' ? 'delete' : 'provision';
  }
  // A failed database is repaired by deploying its build again (after fixing its settings),
  // or by building again when no build ever succeeded.
  const repair: Action = hasBuild ? 'reconfigure' : 'rebuild';
  if (status === 'failed') {
    if (action === 'provision') return 'rebuild';
    return action === 'pause' ? 'terminate' : repair;
  }
  if (status === 'paused') return action === 'provision' ? 'rebuild' : 'resume';
  // running
  if (action === 'provision') return 'rebuild';
  // Running is what a resume would reach: no other action is what the user meant.
  if (action === 'resume') return null;
  return repair;
}

function cancelGoal(goal: Goal | null): ActionAvailability {
  if (!goal) return { allowed: false, mode: 'immediate', reason: 'No action is queued.' };
  if (goal.claimedAt) {
    return {
      allowed: false,
      mode: 'immediate',
      reason: `The ${goal.action} has already started and can no longer be cancelled.`,
    };
  }
  return { allowed: true, mode: 'immediate' };
}
