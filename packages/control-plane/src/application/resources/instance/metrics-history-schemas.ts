import { type Static, Type } from 'typebox';
import { InstanceMetrics } from './instance-schemas.ts';

export const MetricsHistoryQuery = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Only readings taken after this time; default (and at most) the retention, the last 24 hours.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type MetricsHistoryFilter = Static<typeof MetricsHistoryQuery>;

export const MetricsSample = Type.Object(
  {
    at: Type.String({ format: 'date-time', description: 'When the reading was taken.' }),
    ...InstanceMetrics.properties,
  },
  { $id: 'MetricsSample' },
);

export const MetricsHistory = Type.Object(
  {
    samples: Type.Array(MetricsSample, {
      description:
        'Readings of the database’s instances, oldest first. Counters are since each instance started: a counter that falls is a restart.',
    }),
    intervalSeconds: Type.Number({ description: 'Seconds between two readings.' }),
    retentionSeconds: Type.Number({ description: 'How long readings are kept.' }),
  },
  { $id: 'MetricsHistory' },
);
