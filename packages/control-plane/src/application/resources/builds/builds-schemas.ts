import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { BuildTable } from '../../../adapters/store/schema.ts';
import { DateTime, iso, Uuid } from '../common-schemas.ts';

const NullableDateTime = Type.Union([DateTime, Type.Null()]);

/** The Build resource of spec §2. */
export const BuildSchema = Type.Object(
  {
    id: Uuid,
    databaseId: Uuid,
    builderJobId: Type.Union([Type.String(), Type.Null()], {
      description: '`<builder process id>/<attempt>` of the attempt that ran (or runs) it.',
    }),
    imageUri: Type.Union([Type.String(), Type.Null()], {
      description: 'The artifact: a `file://` folder URL (process driver) or a container image.',
    }),
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('in_progress'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
    ]),
    logsUrl: Type.Union([Type.String(), Type.Null()], {
      description: 'Absolute path of the build log: `/v1/builds/{id}/logs`.',
    }),
    startedAt: NullableDateTime,
    finishedAt: NullableDateTime,
    buildDurationSeconds: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Wall-clock seconds of the attempt that finished it.',
    }),
    computeTypeUsed: Type.Union([Type.String(), Type.Null()], {
      description: 'The build compute tier (see docs/control-plane/builds.md, rate table).',
    }),
    costEstimateCents: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Estimated cost in USD cents: ceil(minutes × the tier rate), at least 1.',
    }),
    createdAt: DateTime,
  },
  { $id: 'Build' },
);

/** The API form of a build row (spec §2 Build); a failed build's reason is the last line of its log. */
export function buildResource(row: Selectable<BuildTable>): Static<typeof BuildSchema> {
  return {
    id: row.id,
    databaseId: row.database_id,
    builderJobId: row.builder_job_id,
    imageUri: row.image_uri,
    status: row.status as 'queued' | 'in_progress' | 'succeeded' | 'failed',
    logsUrl: `/v1/builds/${row.id}/logs`,
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    buildDurationSeconds: row.duration_seconds,
    computeTypeUsed: row.compute_type,
    costEstimateCents: row.cost_estimate_cents,
    createdAt: iso(row.created_at),
  };
}
