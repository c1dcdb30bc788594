import { describe, expect, it } from 'vitest';
import { allowedActions } from '../src/domain/allowed-actions.ts';
import { ACTIONS, type Action, type DatabaseStatus } from '../src/domain/database-lifecycle.ts';

/**
 * The way out of every status (issue 15): for each settled status, and for a failed first
 * deploy and a failed redeploy, which actions are allowed and, for every refused one, which
 * action its reason tells the user to use instead. Written out by hand on purpose, restating
 * docs/control-plane/lifecycle.md, so that changing a rule fails here until the table and the
 * doc change with it. `ok` is allowed; a label is "use <label> instead"; `nothing to do` is a
 * refusal of an action whose end the database is at already. A transitional status
 * allows nothing but cancel-goal (last test).
 */
type Cell =
  | 'ok'
  | 'nothing to do'
  | 'Provision'
  | 'Rebuild'
  | 'Reconfigure'
  | 'Resume'
  | 'Resume replication'
  | 'Terminate'
  | 'Delete';

interface Case {
  readonly name: string;
  readonly status: DatabaseStatus;
  readonly hasBuild: boolean;
  readonly hasDeployment: boolean;
  /** Every action but cancel-goal. */
  readonly cells: Record<Exclude<Action, 'cancel-goal'>, Cell>;
}

const CASES: Case[] = [
  {
    name: 'draft',
    status: 'draft',
    hasBuild: false,
    hasDeployment: false,
    cells: {
      provision: 'ok',
      rebuild: 'Provision',
      reconfigure: 'Provision',
      redeploy: 'Provision',
      resize: 'Provision',
      pause: 'Provision',
      resume: 'Provision',
      terminate: 'Delete',
      delete: 'ok',
      reload: 'Provision',
      'pause-replication': 'Provision',
      'resume-replication': 'Provision',
    },
  },
  {
    name: 'running',
    status: 'running',
    hasBuild: true,
    hasDeployment: true,
    cells: {
      provision: 'Rebuild',
      rebuild: 'ok',
      reconfigure: 'ok',
      redeploy: 'ok',
      resize: 'ok',
      pause: 'ok',
      resume: 'nothing to do',
      terminate: 'ok',
      delete: 'ok',
      reload: 'ok',
      // Every case has replication paused; the other way round is tested below.
      'pause-replication': 'Resume replication',
      'resume-replication': 'ok',
    },
  },
  {
    name: 'paused',
    status: 'paused',
    hasBuild: true,
    hasDeployment: true,
    cells: {
      provision: 'Rebuild',
      rebuild: 'ok',
      reconfigure: 'ok',
      redeploy: 'ok',
      resize: 'ok',
      pause: 'Resume',
      resume: 'ok',
      terminate: 'ok',
      delete: 'ok',
      reload: 'Resume',
      'pause-replication': 'Resume',
      'resume-replication': 'Resume',
    },
  },
  {
    name: 'failed first deploy: the build failed',
    status: 'failed',
    hasBuild: false,
    hasDeployment: false,
    cells: {
      provision: 'ok',
      rebuild: 'ok',
      reconfigure: 'Rebuild',
      redeploy: 'Rebuild',
      resize: 'Rebuild',
      pause: 'Terminate',
      resume: 'Rebuild',
      terminate: 'ok',
      delete: 'ok',
      reload: 'Rebuild',
      'pause-replication': 'Rebuild',
      'resume-replication': 'Rebuild',
    },
  },
  {
    name: 'failed first deploy: the build succeeded, the deploy failed',
    status: 'failed',
    hasBuild: true,
    hasDeployment: false,
    cells: {
      provision: 'ok',
      rebuild: 'ok',
      reconfigure: 'ok',
      redeploy: 'ok',
      resize: 'ok',
      pause: 'Terminate',
      resume: 'Reconfigure',
      terminate: 'ok',
      delete: 'ok',
      reload: 'Reconfigure',
      'pause-replication': 'Reconfigure',
      'resume-replication': 'Reconfigure',
    },
  },
  {
    name: 'failed redeploy (it ran before)',
    status: 'failed',
    hasBuild: true,
    hasDeployment: true,
    cells: {
      provision: 'Rebuild',
      rebuild: 'ok',
      reconfigure: 'ok',
      redeploy: 'ok',
      resize: 'ok',
      pause: 'Terminate',
      resume: 'Reconfigure',
      terminate: 'ok',
      delete: 'ok',
      reload: 'Reconfigure',
      'pause-replication': 'Reconfigure',
      'resume-replication': 'Reconfigure',
    },
  },
  {
    name: 'terminated',
    status: 'terminated',
    hasBuild: true,
    hasDeployment: true,
    cells: {
      provision: 'ok',
      rebuild: 'Provision',
      reconfigure: 'Provision',
      redeploy: 'Provision',
      resize: 'Provision',
      pause: 'Provision',
      resume: 'Provision',
      terminate: 'Delete',
      delete: 'ok',
      reload: 'Provision',
      'pause-replication': 'Provision',
      'resume-replication': 'Provision',
    },
  },
];

describe('the way out of every status', () => {
  it.each(CASES)('$name', ({ status, hasBuild, hasDeployment, cells }) => {
    const matrix = allowedActions({
      status,
      goal: null,
      plan: 'pro',
      hasBuild,
      hasDeployment,
      replicationPaused: true,
    });
    for (const [action, cell] of Object.entries(cells) as [Action, Cell][]) {
      if (cell === 'ok') {
        expect(matrix[action], action).toEqual({ allowed: true, mode: matrix[action].mode });
      } else if (cell === 'nothing to do') {
        expect(matrix[action].allowed, action).toBe(false);
        expect(matrix[action].reason, action).toMatch(/ already: there is nothing to [a-z-]+\.$/);
      } else {
        expect(matrix[action].allowed, action).toBe(false);
        expect(matrix[action].reason, action).toMatch(new RegExp(`: use ${cell} instead\\.$`));
      }
    }
  });

  it('names the alternative in full sentences a user can act on', () => {
    const failedFirst = allowedActions({
      status: 'failed',
      goal: null,
      plan: 'pro',
      hasBuild: true,
      hasDeployment: true,
      replicationPaused: false,
    });
    expect(failedFirst.provision.reason).toBe(
      'Provision needs a draft or terminated database; this one is failed: use Rebuild instead.',
    );
    const noBuild = allowedActions({
      status: 'failed',
      goal: null,
      plan: 'pro',
      hasBuild: false,
      hasDeployment: false,
      replicationPaused: false,
    });
    expect(noBuild.reconfigure.reason).toBe(
      'The database has no successful build yet: use Rebuild instead.',
    );
  });

  it('points the replication pair at each other on a running database', () => {
    const base = {
      status: 'running',
      goal: null,
      plan: 'pro',
      hasBuild: true,
      hasDeployment: true,
    } as const;
    expect(allowedActions({ ...base, replicationPaused: false })['resume-replication'].reason).toBe(
      'Replication is not paused: use Pause replication instead.',
    );
    expect(allowedActions({ ...base, replicationPaused: true })['pause-replication'].reason).toBe(
      'Replication is already paused: use Resume replication instead.',
    );
  });

  it('leaves only waiting or cancelling while a goal is pending', () => {
    const queued = allowedActions({
      status: 'deploying',
      goal: { action: 'reconfigure', fromStatus: 'failed', requestedAt: '2026-01-01T00:00:00Z' },
      plan: 'pro',
      hasBuild: true,
      hasDeployment: false,
      replicationPaused: false,
    });
    for (const action of ACTIONS.filter((a) => a !== 'cancel-goal')) {
      expect(queued[action].reason).toBe('Another action is queued: reconfigure. Cancel it first.');
    }
    expect(queued['cancel-goal'].allowed).toBe(true);
  });
});
