import type { Transaction, Updateable } from 'kysely';
import type { RoleContext } from '../roles/role.ts';
import type { DatabaseTable, Goal, Store } from '../store/schema.ts';
import type { DatabaseRow } from './leases.ts';

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

/** One claimed goal being worked on by this process. */
export interface GoalRun {
  readonly context: RoleContext;
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
  const row = await db
    .updateTable('databases')
    .set(changes)
    .where('id', '=', run.database.id)
    .where('lease_owner', '=', run.owner)
    .returningAll()
    .executeTakeFirst();
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

/** The changes that close a goal: no goal, no lease. */
export function finishedGoal(changes: DatabaseChanges): DatabaseChanges {
  return { ...changes, goal: null, lease_owner: null, lease_until: null, updated_at: new Date() };
}
