/**
 * A deploy as a state machine of pure steps: each takes what the interpreter observed (from the
 * driver, the store and the clock) and returns a transition: the effects to apply, in order, and
 * the next step (or none: the goal is finished). `reconciler/deploy.ts` observes and applies;
 * nothing here does I/O, so every branch is a function call in a test.
 *
 * The steps: `prepare` (record the new instance, a standby beside the serving one if any),
 * `start` (the driver starts it, or adopts it if it runs), `wait` (until every replica's
 * /health answers 200: the snapshot is in), `switch` (the endpoint sends queries to it), and
 * `retire` (the previous instance stops; the deploy succeeded). A failure goes through `fail`
 * (the new instance stops) and `failed` (the database keeps the instance that served before,
 * or is failed without one). The effects that record a phase (`DeployProgress`) are the points
 * a successor resumes from.
 */
import type { DeployProgress } from './goal.ts';

/** How long a new instance gets to load its snapshot before the deploy fails. */
export const SNAPSHOT_LOAD_TIMEOUT_MS = 5 * 60_000;
/** How often `wait` asks the replicas' /health. */
export const HEALTH_POLL_MS = 250;
/** The instance's last log lines a failed deploy quotes. */
const QUOTED_LOG_LINES = 10;

/** What a whole deploy works with, known once its deployment is recorded. */
export interface DeployPlan {
  readonly deploymentId: string;
  readonly buildId: string;
}

/** The instance a step works on, and the one it replaces (stopped once the new one serves). */
interface InstancePair {
  readonly instanceId: string;
  readonly previousInstanceId?: string | undefined;
}

export type DeployStep =
  | { readonly name: 'prepare' }
  | ({ readonly name: 'start' } & InstancePair)
  /** `startedHere`: this pass started the process it waits for (else it may start it once). */
  | ({ readonly name: 'wait'; readonly startedHere: boolean } & InstancePair)
  | ({ readonly name: 'switch' } & InstancePair)
  | ({ readonly name: 'retire' } & InstancePair)
  | { readonly name: 'fail'; readonly reason: string; readonly instanceId?: string }
  | { readonly name: 'failed'; readonly reason: string };

/** A started instance as the store records it. */
export interface StartedInstance {
  readonly privateUrl: string;
  readonly port: number | null;
  readonly pid: number | null;
  readonly containerRef: string;
  readonly replicaUrls: ReadonlyArray<string | null>;
  /** The version of the database's keys the launch read its key ids at. */
  readonly keysVersion: number;
  readonly replicas: number;
}

/** What the interpreter observes before each step. */
export interface DeployFacts {
  readonly prepare: {
    /** The instance serving the database now, if any. */
    readonly servingInstanceId: string | undefined;
    /** Standbys an earlier try of this deploy left behind. */
    readonly standbyIds: readonly string[];
    /** A fresh id for the new instance. */
    readonly newInstanceId: string;
  };
  /** The driver's answer to `start` (it adopts an instance that already runs). */
  readonly start:
    | { readonly started: true; readonly instance: StartedInstance }
    | { readonly started: false; readonly reason: string };
  readonly wait:
    | { readonly ready: true }
    | {
        readonly ready: false;
        readonly alive: true;
        readonly now: number;
        readonly deadline: number;
      }
    | { readonly ready: false; readonly alive: false; readonly lastLogLines: readonly string[] };
  readonly switch: Record<string, never>;
  readonly retire: {
    /** Replicas the database ran before this deploy, and runs after it. */
    readonly replicasBefore: number;
    readonly replicasAfter: number;
    readonly endpointUrl: string;
  };
  readonly fail: Record<string, never>;
  readonly failed: {
    /** The instance that served before the deploy is alive and keeps serving. */
    readonly stillServing: boolean;
    /** The reason in the user's words (the deployment log keeps the instance's). */
    readonly userReason: string;
  };
}

export type DeployEffect =
  | { readonly kind: 'log'; readonly message: string }
  | { readonly kind: 'openEndpoint' }
  /** Stops an instance and marks its row removed. */
  | { readonly kind: 'removeInstance'; readonly instanceId: string }
  | {
      readonly kind: 'recordInstance';
      readonly standby: boolean;
      readonly progress: DeployProgress & { readonly phase: 'deploy:start' };
    }
  | {
      readonly kind: 'recordStarted';
      readonly instance: StartedInstance;
      readonly progress: DeployProgress & { readonly phase: 'deploy:wait' };
    }
  | { readonly kind: 'sleep'; readonly ms: number }
  | { readonly kind: 'route'; readonly instanceId: string }
  /** The new instance serves, the previous one's row is removed. */
  | {
      readonly kind: 'recordSwitch';
      readonly progress: DeployProgress & { phase: 'deploy:retire' };
    }
  | { readonly kind: 'stopInstance'; readonly instanceId: string }
  /** A resize down: the replicas gone leave no replication state on the source. */
  | { readonly kind: 'dropReplicationState'; readonly fromOrdinal: number }
  | { readonly kind: 'unroute' }
  | { readonly kind: 'succeed'; readonly instanceId: string }
  | { readonly kind: 'failDeployment'; readonly reason: string; readonly stillServing: boolean };

export interface Transition {
  readonly effects: readonly DeployEffect[];
  /** Null: the goal is finished. */
  readonly next: DeployStep | null;
}

type StepOf<Name extends DeployStep['name']> = Extract<DeployStep, { name: Name }>;

/** The step a pass starts at, from the recorded phase and the new instance's row (if any). */
export function resumeAt(
  progress: DeployProgress,
  instance: { readonly started: boolean } | undefined,
): Transition {
  const effects: DeployEffect[] = [{ kind: 'openEndpoint' }];
  if (progress.phase === 'deploy:prepare') return { effects, next: { name: 'prepare' } };
  const { instanceId, previousInstanceId } = progress;
  if (!instance) {
    return { effects, next: { name: 'fail', reason: 'The new instance record is missing.' } };
  }
  if (progress.phase === 'deploy:retire') {
    return { effects, next: { name: 'retire', instanceId, previousInstanceId } };
  }
  if (progress.phase === 'deploy:wait' && instance.started) {
    // Resumed while loading: the process may be gone (a graceful control-plane exit stops
    // instances); the wait starts it once more.
    return { effects, next: { name: 'wait', instanceId, previousInstanceId, startedHere: false } };
  }
  return toStart(effects, { instanceId, previousInstanceId });
}

function toStart(effects: DeployEffect[], pair: InstancePair): Transition {
  return {
    effects: [...effects, { kind: 'log', message: `Starting instance ${pair.instanceId}` }],
    next: { name: 'start', ...pair },
  };
}

function prepare(plan: DeployPlan, facts: DeployFacts['prepare']): Transition {
  // A standby left by an earlier try of this deploy goes first: one standby at most.
  const effects: DeployEffect[] = facts.standbyIds.map((instanceId) => ({
    kind: 'removeInstance',
    instanceId,
  }));
  const pair = { instanceId: facts.newInstanceId, previousInstanceId: facts.servingInstanceId };
  effects.push({
    kind: 'recordInstance',
    standby: facts.servingInstanceId !== undefined,
    progress: { phase: 'deploy:start', deploymentId: plan.deploymentId, ...withoutUndefined(pair) },
  });
  return toStart(effects, pair);
}

function start(plan: DeployPlan, step: StepOf<'start'>, facts: DeployFacts['start']): Transition {
  const { instanceId, previousInstanceId } = step;
  if (!facts.started)
    return { effects: [], next: { name: 'fail', reason: facts.reason, instanceId } };
  const { instance } = facts;
  const port = instance.port ? ` on private port ${instance.port}` : '';
  const replicas = instance.replicas > 1 ? ` with ${instance.replicas} replicas` : '';
  return {
    effects: [
      {
        kind: 'recordStarted',
        instance,
        progress: {
          phase: 'deploy:wait',
          deploymentId: plan.deploymentId,
          ...withoutUndefined({ instanceId, previousInstanceId }),
        },
      },
      {
        kind: 'log',
        message: `Instance ${instanceId} started${port} (${instance.containerRef})${replicas}`,
      },
      {
        kind: 'log',
        message:
          instance.replicas > 1
            ? 'Waiting for every replica to load its snapshot'
            : 'Waiting for the snapshot to load',
      },
    ],
    next: { name: 'wait', instanceId, previousInstanceId, startedHere: true },
  };
}

function wait(step: StepOf<'wait'>, facts: DeployFacts['wait']): Transition {
  const { instanceId, previousInstanceId } = step;
  if (facts.ready) return { effects: [], next: { name: 'switch', instanceId, previousInstanceId } };
  if (!facts.alive) {
    if (!step.startedHere) return toStart([], { instanceId, previousInstanceId });
    const quoted = facts.lastLogLines.slice(-QUOTED_LOG_LINES).map(withoutCredentials);
    const lines = quoted.length ? ` Last log lines:\n${quoted.join('\n')}` : '';
    const reason = `The instance exited before its snapshot loaded.${lines}`;
    return { effects: [], next: { name: 'fail', reason, instanceId } };
  }
  if (facts.now > facts.deadline) {
    const minutes = SNAPSHOT_LOAD_TIMEOUT_MS / 60_000;
    const reason = `The instance did not load its snapshot within ${minutes} minutes.`;
    return { effects: [], next: { name: 'fail', reason, instanceId } };
  }
  return { effects: [{ kind: 'sleep', ms: HEALTH_POLL_MS }], next: step };
}

function switchTo(plan: DeployPlan, step: StepOf<'switch'>): Transition {
  const { instanceId, previousInstanceId } = step;
  return {
    effects: [
      { kind: 'route', instanceId },
      {
        kind: 'recordSwitch',
        progress: {
          phase: 'deploy:retire',
          deploymentId: plan.deploymentId,
          ...withoutUndefined({ instanceId, previousInstanceId }),
        },
      },
      { kind: 'log', message: `The endpoint now sends queries to instance ${instanceId}` },
    ],
    next: { name: 'retire', instanceId, previousInstanceId },
  };
}

function retire(step: StepOf<'retire'>, facts: DeployFacts['retire']): Transition {
  const effects: DeployEffect[] = [];
  const previousId = step.previousInstanceId;
  if (previousId) {
    effects.push(
      {
        kind: 'log',
        message: `Stopping the previous instance ${previousId} once its queries in flight finish`,
      },
      { kind: 'stopInstance', instanceId: previousId },
    );
  }
  if (facts.replicasAfter < facts.replicasBefore) {
    effects.push({ kind: 'dropReplicationState', fromOrdinal: facts.replicasAfter });
  }
  effects.push(
    { kind: 'log', message: `Instance is serving at ${facts.endpointUrl}` },
    { kind: 'succeed', instanceId: step.instanceId },
  );
  return { effects, next: null };
}

function fail(step: StepOf<'fail'>): Transition {
  const effects: DeployEffect[] = [{ kind: 'log', message: `Deploy failed: ${step.reason}` }];
  if (step.instanceId) effects.push({ kind: 'removeInstance', instanceId: step.instanceId });
  return { effects, next: { name: 'failed', reason: step.reason } };
}

function failed(facts: DeployFacts['failed']): Transition {
  const effects: DeployEffect[] = facts.stillServing ? [] : [{ kind: 'unroute' }];
  effects.push({
    kind: 'failDeployment',
    reason: facts.userReason,
    stillServing: facts.stillServing,
  });
  return { effects, next: null };
}

/** The transition from `step`, given what was observed for it. */
export function nextTransition<Name extends DeployStep['name']>(
  plan: DeployPlan,
  step: StepOf<Name>,
  facts: DeployFacts[Name],
): Transition {
  // The casts pair each step with its own facts: `Name` is the same type parameter for both.
  const current = step as DeployStep;
  switch (current.name) {
    case 'prepare':
      return prepare(plan, facts as DeployFacts['prepare']);
    case 'start':
      return start(plan, current, facts as DeployFacts['start']);
    case 'wait':
      return wait(current, facts as DeployFacts['wait']);
    case 'switch':
      return switchTo(plan, current);
    case 'retire':
      return retire(current, facts as DeployFacts['retire']);
    case 'fail':
      return fail(current);
    case 'failed':
      return failed(facts as DeployFacts['failed']);
  }
}

/** Blanks credentials in URLs of quoted log lines (`//user:secret@` → `//user:***@`). */
function withoutCredentials(text: string): string {
  return text.replace(/(\/\/[^/\s:@]*:)[^@\s/]*@/g, '$1***@');
}

/** The pair as stored: a first deploy has no previous instance (no `undefined` in JSON). */
function withoutUndefined(pair: InstancePair): { instanceId: string; previousInstanceId?: string } {
  return pair.previousInstanceId
    ? { instanceId: pair.instanceId, previousInstanceId: pair.previousInstanceId }
    : { instanceId: pair.instanceId };
}
