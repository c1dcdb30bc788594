import { Type } from 'typebox';

const Revisions = {
  runningRevision: Type.Integer({
    description: 'The lowest revision among live processes; 0 when none runs.',
  }),
  latestRevision: Type.Integer({ description: "This control plane's code revision." }),
  runningCount: Type.Integer({ description: 'Processes with a heartbeat in the last 30 s.' }),
  desiredCount: Type.Integer({ description: 'At least this many must run; more are allowed.' }),
};
const Queue = Type.Object({ waiting: Type.Integer(), inFlight: Type.Integer() });
const DeadLetters = Type.Object({ waiting: Type.Integer() });

export const SystemHealth = Type.Object(
  {
    services: Type.Array(Type.Object({ name: Type.String(), ...Revisions })),
    builderServices: Type.Array(Type.Object({ region: Type.String(), ...Revisions })),
    queues: Type.Array(
      Type.Object({
        region: Type.String(),
        build: Queue,
        deploy: Queue,
        buildResults: Queue,
        dlq: DeadLetters,
        deployDlq: DeadLetters,
      }),
    ),
    sidecarHealth: Type.Array(
      Type.Object({
        region: Type.String(),
        ok: Type.Boolean({ description: 'A health monitor is live in the region.' }),
        latencyMs: Type.Union([Type.Integer(), Type.Null()], {
          description: 'Round trip of `SELECT 1` on the store, in ms; null when not ok.',
        }),
      }),
    ),
    recentBuilds: Type.Array(
      Type.Object({
        region: Type.String(),
        builds: Type.Array(
          Type.Object({
            id: Type.String(),
            status: Type.String(),
            startedAt: Type.Union([Type.String(), Type.Null()]),
            durationMs: Type.Union([Type.Integer(), Type.Null()]),
            logsUrl: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
      }),
    ),
  },
  { $id: 'SystemHealth' },
);
