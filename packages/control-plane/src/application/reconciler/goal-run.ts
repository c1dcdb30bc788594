import { setTimeout as sleep } from 'node:timers/promises';
import { healthStatusOf } from '@replix/instance-protocol';
import type { Transaction, Updateable } from 'kysely';
import type { DatabaseRow } from '../../adapters/store/database-store.ts';
import { updateLeasedDatabase } from '../../adapters/store/database-store.ts';
import type { DatabaseTable, Store } from '../../adapters/store/schema.ts';
import { type DeployGoal, type DeployProgress, type Goal, isStopGoal } from '../../domain/goal.ts';
import type { RoleContext } from '../../roles/role.ts';

/** What a step leaves behind: the goal is finished, or it waits (e.g. for its build). */
export type GoalOutcome =
  | { readonly kind: 'done' }
  | { readonly kind: 'wait'; readonly retryAfterMs: number };

export const DONE: GoalOutcome = { kind: 'done' };

/** Another reconciler holds the database now (our lease ran out); stop without touching it. */
export class LeaseLostError extends Error {
  constructor() {
    super('The lease on the database was lost.');
    this.name = 'LeaseLostError';
  }
}

/** Time, for waits and deadlines: the system's, or a test's fake. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early when `signal` aborts (never rejects). */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, { signal }).catch(() => {}),
};

/** What a goal observes besides the driver and the store. */
export interface GoalPorts {
  readonly clock: Clock;
  /** The status a replica's /health answers; 0 when unreachable. */
  healthStatusOf(replicaUrl: string): Promise<number>;
}

export const systemPorts: GoalPorts = { clock: systemClock, healthStatusOf };

/** One claimed goal being worked on by this process. */
export interface GoalRun {
  readonly context: RoleContext;
  readonly ports: GoalPorts;
  /** The lease owner: this process's reconciler. */
  readonly owner: string;
  /** Aborted when the role stops or the lease is lost. */
  readonly signal: AbortSignal;
  database: DatabaseRow;
}

export function goalOf(run: GoalRun): Goal {
  if (!run.database.goal) throw new Error('The database has no goal.');
  return run.database.goal;
}

type DatabaseChanges = Updateable<DatabaseTable>;

/**
 * Writes to the claimed database row, only while our lease holds, and keeps `run.database`
 * current. Every step persists its progress this way, so a successor resumes where it stopped.
 */
export async function updateClaimed(
  run: GoalRun,
  changes: DatabaseChanges,
  db: Transaction<Store> | RoleContext['db'] = run.context.db,
): Promise<void> {
  const row = await updateLeasedDatabase(db, run.database.id, run.owner, changes);
  if (!row) throw new LeaseLostError();
  run.database = row;
}

/** Records the goal's next phase (and anything it learned, like a build or deployment id). */
export function saveGoal(
  run: GoalRun,
  goal: Goal,
  db: Transaction<Store> | RoleContext['db'] = run.context.db,
): Promise<void> {
  return updateClaimed(run, { goal: JSON.stringify(goal) }, db);
}

/** The goal being deployed (a stop goal never deploys). */
export function deployGoalOf(run: GoalRun): DeployGoal {
  const goal = goalOf(run);
  if (isStopGoal(goal)) throw new Error(`A ${goal.action} goal does not deploy.`);
  return goal;
}

/** Records how far the deploy got, keeping what the goal had (action, build, …). */
export function saveDeployProgress(
  run: GoalRun,
  progress: DeployProgress,
  db: Transaction<Store> | RoleContext['db'] = run.context.db,
): Promise<void> {
  // A deploy goal with its progress replaced is a deploy goal of the same action.
  return saveGoal(run, { ...deployGoalOf(run), ...progress } as DeployGoal, db);
}

/** The changes that close a goal: no goal, no lease. */
export function finishedGoal(changes: DatabaseChanges): DatabaseChanges {
  return { ...changes, goal: null, lease_owner: null, lease_until: null, updated_at: new Date() };
}
