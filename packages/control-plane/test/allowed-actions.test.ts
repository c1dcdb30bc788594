import { describe, expect, it } from 'vitest';
import {
  type AllowedActions,
  allowedActions,
  allowedActionsWithLimits,
} from '../src/domain/allowed-actions.ts';
import {
  ACTIONS,
  type Action,
  DATABASE_STATUSES,
  type DatabaseStatus,
} from '../src/domain/database-lifecycle.ts';
import type { Goal } from '../src/domain/goal.ts';
import { PLAN_LIMITS, PLANS } from '../src/domain/plans.ts';

type Case = { hasBuild: boolean; hasDeployment: boolean; replicationPaused: boolean };

/**
 * The expected allowed set per status when no goal is pending, written out by hand from the
 * rules in docs/control-plane/lifecycle.md (not computed the way the implementation does).
 */
function expectedAllowed(
  status: DatabaseStatus,
  { hasBuild, hasDeployment, replicationPaused }: Case,
): Action[] {
  const deployable: Action[] = hasBuild ? ['reconfigure', 'redeploy', 'resize'] : [];
  switch (status) {
    case 'draft':
    case 'terminated':
      return ['provision', 'delete'];
    case 'running':
      return [
        'rebuild',
        ...deployable,
        'pause',
        'terminate',
        'delete',
        'reload',
        replicationPaused ? 'resume-replication' : 'pause-replication',
      ];
    case 'paused':
      return ['rebuild', ...deployable, 'resume', 'terminate', 'delete'];
    case 'failed':
      // Never deployed: provision starts over.
      return [
        ...(hasDeployment ? [] : (['provision'] as Action[])),
        'rebuild',
        ...deployable,
        'terminate',
        'delete',
      ];
    default:
      return [];
  }
}

const QUEUED_MODE: Action[] = [
  'provision',
  'rebuild',
  'reconfigure',
  'redeploy',
  'resize',
  'pause',
  'resume',
  'terminate',
];
const IMMEDIATE_MODE: Action[] = [
  'reload',
  'pause-replication',
  'resume-replication',
  'cancel-goal',
];

function expectedMode(action: Action, status: DatabaseStatus, hasBuild: boolean): string {
  if (QUEUED_MODE.includes(action)) return 'queued';
  if (IMMEDIATE_MODE.includes(action)) return 'immediate';
  // delete: a teardown first whenever something may be deployed.
  return status === 'running' || status === 'paused' || (status === 'failed' && hasBuild)
    ? 'queued'
    : 'immediate';
}

function goalOf(
  state: 'none' | 'queued' | 'claimed',
  action: Goal['action'] = 'terminate',
): Goal | null {
  if (state === 'none') return null;
  return {
    action,
    fromStatus: 'running',
    requestedAt: '2026-01-01T00:00:00.000Z',
    ...(state === 'claimed' ? { claimedAt: '2026-01-01T00:00:01.000Z' } : {}),
  } as Goal;
}

function expectWellFormed(matrix: AllowedActions): void {
  expect(Object.keys(matrix)).toEqual([...ACTIONS]);
  for (const action of ACTIONS) {
    const entry = matrix[action];
    expect(['immediate', 'queued']).toContain(entry.mode);
    if (entry.allowed) expect(entry).not.toHaveProperty('reason');
    else expect(entry.reason).toMatch(/^[A-Z].{10,}\.$/);
  }
}

const rows: Array<
  [DatabaseStatus, 'none' | 'queued' | 'claimed', string, boolean, boolean, boolean]
> = [];
for (const status of DATABASE_STATUSES)
  for (const goal of ['none', 'queued', 'claimed'] as const)
    for (const plan of PLANS)
      for (const [hasBuild, hasDeployment] of [
        [true, true],
        [true, false],
        [false, false],
      ] as const)
        for (const replicationPaused of [false, true])
          rows.push([status, goal, plan, hasBuild, hasDeployment, replicationPaused]);

describe('allowedActions', () => {
  it.each(rows)(
    'status %s, goal %s, plan %s, hasBuild %s, hasDeployment %s, replicationPaused %s',
    (status, goalState, plan, hasBuild, hasDeployment, replicationPaused) => {
      const matrix = allowedActions({
        status,
        goal: goalOf(goalState),
        plan: plan as (typeof PLANS)[number],
        hasBuild,
        hasDeployment,
        replicationPaused,
      });
      expectWellFormed(matrix);
      const allowed =
        goalState === 'none'
          ? expectedAllowed(status, { hasBuild, hasDeployment, replicationPaused })
          : goalState === 'queued'
            ? ['cancel-goal']
            : [];
      expect(ACTIONS.filter((action) => matrix[action].allowed)).toEqual(
        ACTIONS.filter((action) => allowed.includes(action)),
      );
      for (const action of ACTIONS) {
        expect(matrix[action].mode, action).toBe(expectedMode(action, status, hasBuild));
      }
    },
  );

  it('says a queued goal must be cancelled first, and a claimed one awaited', () => {
    const base = {
      plan: 'pro',
      hasBuild: true,
      hasDeployment: true,
      replicationPaused: false,
    } as const;
    const queued = allowedActions({ ...base, status: 'terminating', goal: goalOf('queued') });
    expect(queued.pause.reason).toBe('Another action is queued: terminate. Cancel it first.');
    expect(queued['cancel-goal']).toEqual({ allowed: true, mode: 'immediate' });
    const claimed = allowedActions({
      ...base,
      status: 'building',
      goal: goalOf('claimed', 'provision'),
    });
    expect(claimed.rebuild.reason).toBe(
      'The database is building (provision in progress); wait until it finishes.',
    );
    expect(claimed['cancel-goal'].reason).toBe(
      'The provision has already started and can no longer be cancelled.',
    );
    const none = allowedActions({ ...base, status: 'running', goal: null });
    expect(none['cancel-goal'].reason).toBe('No action is queued.');
  });

  it('names the statuses an action needs', () => {
    const matrix = allowedActions({
      status: 'draft',
      goal: null,
      plan: 'free',
      hasBuild: false,
      hasDeployment: false,
      replicationPaused: false,
    });
    expect(matrix.redeploy.reason).toBe(
      'Redeploy needs a running, paused or failed database; this one is draft: use Provision instead.',
    );
    expect(matrix.resume.reason).toBe(
      'Resume needs a paused database; this one is draft: use Provision instead.',
    );
  });

  it('says a running database has nothing to resume, instead of naming an unrelated action', () => {
    const matrix = allowedActionsWithLimits(
      {
        status: 'running',
        goal: null,
        hasBuild: true,
        hasDeployment: true,
        replicationPaused: false,
      },
      PLAN_LIMITS.free,
    );
    expect(matrix.resume.reason).toBe(
      'Resume needs a paused database; this one is running already: there is nothing to resume.',
    );
    // Pausing a paused database still points the way back.
    const paused = allowedActionsWithLimits(
      {
        status: 'paused',
        goal: null,
        hasBuild: true,
        hasDeployment: true,
        replicationPaused: false,
      },
      PLAN_LIMITS.free,
    );
    expect(paused.pause.reason).toBe(
      'Pause needs a running database; this one is paused: use Resume instead.',
    );
  });

  it('refuses resize on a plan whose largest size is the smallest one and that allows one replica', () => {
    const matrix = allowedActionsWithLimits(
      {
        status: 'running',
        goal: null,
        hasBuild: true,
        hasDeployment: true,
        replicationPaused: false,
      },
      { ...PLAN_LIMITS.free, maxInstanceSize: 'xs' },
    );
    expect(matrix.resize).toEqual({
      allowed: false,
      mode: 'queued',
      reason: 'Your plan allows only the xs size and one replica; upgrade to resize.',
    });
    expect(matrix.reconfigure.allowed).toBe(true);
    // Replicas to add: resize is how.
    const withReplicas = allowedActionsWithLimits(
      {
        status: 'running',
        goal: null,
        hasBuild: true,
        hasDeployment: true,
        replicationPaused: false,
      },
      { ...PLAN_LIMITS.free, maxInstanceSize: 'xs', maxReplicas: 2 },
    );
    expect(withReplicas.resize).toEqual({ allowed: true, mode: 'queued' });
  });

  it('asks for a build before deploying settings', () => {
    const matrix = allowedActions({
      status: 'failed',
      goal: null,
      plan: 'business',
      hasBuild: false,
      hasDeployment: false,
      replicationPaused: false,
    });
    expect(matrix.reconfigure.reason).toBe(
      'The database has no successful build yet: use Rebuild instead.',
    );
    expect(matrix.delete).toEqual({ allowed: true, mode: 'immediate' });
  });
});
