/**
 * A goal: an action the API accepted and the reconciler carries out, stored as JSON on the
 * database's row (`databases.goal`). Each action has its own fields; the reconciler records its
 * progress in the goal as it goes (`phase` and what the phase needs), so a successor resumes
 * where it stopped. The stored phase names are the values below, nothing else (migration 016
 * rewrote the goals of earlier versions).
 */

/** What every goal has, whatever its action. */
interface GoalBase {
  /** The status before the action was accepted; cancel-goal restores it. */
  readonly fromStatus: string;
  readonly requestedAt: string;
  /** Set when a reconciler first claims it: from then on it can no longer be cancelled. */
  readonly claimedAt?: string;
  /**
   * The W3C `traceparent` of the request that queued the goal, when tracing was on: the
   * reconciler's spans for the goal continue that request's trace (docs/tracing.md).
   */
  readonly traceparent?: string;
}

/** Not started: no progress recorded yet. */
interface Unstarted {
  readonly phase?: undefined;
}

/**
 * How far a deploy got: `deploy:prepare` (its deployment is recorded), then, once its new
 * instance is recorded, `deploy:start`, `deploy:wait` (started, loading its snapshot) and
 * `deploy:retire` (the endpoint serves it; the previous instance stops).
 */
export type DeployProgress =
  | { readonly phase: 'deploy:prepare'; readonly deploymentId: string }
  | {
      readonly phase: 'deploy:start' | 'deploy:wait' | 'deploy:retire';
      readonly deploymentId: string;
      /** The instance the deploy starts. */
      readonly instanceId: string;
      /** The instance it replaces, stopped once the new one serves; none on a first deploy. */
      readonly previousInstanceId?: string;
    };

export type DeployPhase = DeployProgress['phase'];

/** A build's progress: queued and awaited (`build`), then succeeded (`deploy`, next a deploy). */
interface BuildProgress {
  readonly phase: 'build' | 'deploy';
  readonly buildId: string;
}

/** provision, rebuild: a new build, then a deploy of it. */
export type BuildGoal = GoalBase & { readonly action: 'provision' | 'rebuild' } & (
    | Unstarted
    | BuildProgress
    | (DeployProgress & { readonly buildId: string })
  );

/** redeploy: a past succeeded build, deployed again. */
export type RedeployGoal = GoalBase & {
  readonly action: 'redeploy';
  readonly buildId: string;
} & (Unstarted | DeployProgress);

/** resize: the deployed build at a new size or replica count (either or both). */
export type ResizeGoal = GoalBase & {
  readonly action: 'resize';
  readonly instanceSize?: string;
  readonly replicas?: number;
} & (Unstarted | DeployProgress);

/** reconfigure, resume: the deployed build with the settings as they are now. */
export type RestartGoal = GoalBase & { readonly action: 'reconfigure' | 'resume' } & (
    | Unstarted
    | DeployProgress
  );

/** pause, terminate, delete: the instance stops; one step, no progress to record. */
export type StopGoal = GoalBase & { readonly action: 'pause' | 'terminate' | 'delete' } & Unstarted;

/** A queued or in-progress action on a database, carried out by the reconciler. */
export type Goal = BuildGoal | RedeployGoal | ResizeGoal | RestartGoal | StopGoal;

/** A goal that ends in a deploy. */
export type DeployGoal = Exclude<Goal, StopGoal>;

export function isStopGoal(goal: Goal): goal is StopGoal {
  return goal.action === 'pause' || goal.action === 'terminate' || goal.action === 'delete';
}

/** The deploy progress a goal records, if it got that far. */
export function deployProgressOf(goal: DeployGoal): DeployProgress | undefined {
  return goal.phase?.startsWith('deploy:') ? (goal as DeployProgress) : undefined;
}
