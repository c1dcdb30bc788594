import { describe, expect, it } from 'vitest';
import {
  type DeployPlan,
  HEALTH_POLL_MS,
  nextTransition,
  resumeAt,
} from '../src/domain/deploy-steps.ts';

// The deploy's decisions alone, as plain function calls (deploy.test.ts runs them end to end).

const plan: DeployPlan = { deploymentId: 'd1', buildId: 'b1' };
const pair = { instanceId: 'new', previousInstanceId: 'old' };
const started = { started: true };

describe('where a deploy resumes', () => {
  it('prepares again from deploy:prepare, after opening the endpoint', () => {
    const resumed = resumeAt({ phase: 'deploy:prepare', deploymentId: 'd1' }, undefined);
    expect(resumed).toEqual({ effects: [{ kind: 'openEndpoint' }], next: { name: 'prepare' } });
  });

  it('fails when the recorded instance is gone', () => {
    const resumed = resumeAt({ phase: 'deploy:wait', deploymentId: 'd1', ...pair }, undefined);
    expect(resumed.next).toEqual({ name: 'fail', reason: 'The new instance record is missing.' });
  });

  it('starts from deploy:start, and from deploy:wait when the instance was never started', () => {
    for (const [phase, instance] of [
      ['deploy:start', started],
      ['deploy:wait', { started: false }],
    ] as const) {
      const resumed = resumeAt({ phase, deploymentId: 'd1', ...pair }, instance);
      expect(resumed.next).toEqual({ name: 'start', ...pair });
      expect(resumed.effects).toContainEqual({ kind: 'log', message: 'Starting instance new' });
    }
  });

  it('waits from deploy:wait without having started the instance itself', () => {
    const resumed = resumeAt({ phase: 'deploy:wait', deploymentId: 'd1', ...pair }, started);
    expect(resumed.next).toEqual({ name: 'wait', ...pair, startedHere: false });
  });

  it('retires from deploy:retire', () => {
    const resumed = resumeAt({ phase: 'deploy:retire', deploymentId: 'd1', ...pair }, started);
    expect(resumed.next).toEqual({ name: 'retire', ...pair });
  });
});

describe('the wait for the snapshot', () => {
  const wait = { name: 'wait', ...pair, startedHere: true } as const;

  it('switches once every replica is ready', () => {
    expect(nextTransition(plan, wait, { ready: true }).next).toEqual({ name: 'switch', ...pair });
  });

  it('polls again while the instance loads, until the deadline', () => {
    const loading = { ready: false, alive: true, now: 1000, deadline: 2000 } as const;
    expect(nextTransition(plan, wait, loading)).toEqual({
      effects: [{ kind: 'sleep', ms: HEALTH_POLL_MS }],
      next: wait,
    });
    const late = { ...loading, now: 2001 };
    expect(nextTransition(plan, wait, late).next).toMatchObject({
      name: 'fail',
      instanceId: 'new',
    });
  });

  it('starts a dead instance once when another process started it, then gives up', () => {
    const dead = { ready: false, alive: false, lastLogLines: ['boom'] } as const;
    const resumed = { ...wait, startedHere: false };
    expect(nextTransition(plan, resumed, dead).next).toEqual({ name: 'start', ...pair });
    expect(nextTransition(plan, wait, dead).next).toEqual({
      name: 'fail',
      reason: 'The instance exited before its snapshot loaded. Last log lines:\nboom',
      instanceId: 'new',
    });
  });
});

describe('the end of a deploy', () => {
  it('retires the previous instance, drops the replicas gone and succeeds', () => {
    const facts = { replicasBefore: 3, replicasAfter: 1, endpointUrl: 'http://e' };
    const { effects, next } = nextTransition(plan, { name: 'retire', ...pair }, facts);
    expect(next).toBeNull();
    expect(effects.map((effect) => effect.kind)).toEqual([
      'log',
      'stopInstance',
      'dropReplicationState',
      'log',
      'succeed',
    ]);
    expect(effects).toContainEqual({ kind: 'dropReplicationState', fromOrdinal: 1 });
  });

  it('a failure stops the new instance, then keeps the serving one or unroutes', () => {
    const failing = nextTransition(plan, { name: 'fail', reason: 'r', instanceId: 'new' }, {});
    expect(failing.effects).toContainEqual({ kind: 'removeInstance', instanceId: 'new' });
    expect(failing.next).toEqual({ name: 'failed', reason: 'r' });
    const kept = nextTransition(
      plan,
      { name: 'failed', reason: 'r' },
      {
        stillServing: true,
        userReason: 'u',
      },
    );
    expect(kept.effects).toEqual([{ kind: 'failDeployment', reason: 'u', stillServing: true }]);
    const none = nextTransition(
      plan,
      { name: 'failed', reason: 'r' },
      {
        stillServing: false,
        userReason: 'u',
      },
    );
    expect(none.effects.map((effect) => effect.kind)).toEqual(['unroute', 'failDeployment']);
  });
});
