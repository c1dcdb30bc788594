import { SchemaConfigError } from '@replix/engine';
import type { Selectable } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DatabaseTable } from '../src/adapters/store/schema.ts';
import { buildFailureMessage } from '../src/application/builder/build-failure-message.ts';
import { databaseConfigHash } from '../src/application/builder/config-hash.ts';
import { BuildError, buildSchemaConfig } from '../src/application/builder/run-build.ts';
import { buildCostCents, computeTypeFor } from '../src/domain/build-rates.ts';
import { ApiError } from '../src/domain/errors.ts';

const database = (overrides: Partial<Selectable<DatabaseTable>> = {}) =>
  ({
    id: 'd',
    source_schema: 'shop',
    schema_config: { field_aliases: { a: 'b' }, sync: { mode: 'cdc', change_column: 'updated' } },
    sync_mode: 'poll',
    sync_interval: 30,
    safety_net: 600,
    ...overrides,
  }) as Selectable<DatabaseTable>;

describe('build rates', () => {
  it('charges ceil(minutes × rate), at least one cent', () => {
    expect(buildCostCents('process.small', 0)).toBe(1);
    expect(buildCostCents('process.small', 59_000)).toBe(1);
    expect(buildCostCents('process.small', 61_000)).toBe(2);
    expect(computeTypeFor('process')).toBe('process.small');
    expect(computeTypeFor('kubernetes')).toBe('kubernetes.job');
  });
});

describe('databaseConfigHash', () => {
  it('changes with the source schema and schema config, not with key order', () => {
    const base = databaseConfigHash(database());
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(
      databaseConfigHash(
        database({
          schema_config: {
            sync: { change_column: 'updated', mode: 'cdc' },
            field_aliases: { a: 'b' },
          },
        }),
      ),
    ).toBe(base);
    expect(databaseConfigHash(database({ source_schema: 'other' }))).not.toBe(base);
    expect(databaseConfigHash(database({ schema_config: {} }))).not.toBe(base);
    // Sync columns reach the instance by its launch environment (reconfigure), not a rebuild.
    expect(databaseConfigHash(database({ sync_interval: 5 }))).toBe(base);
  });
});

describe('buildSchemaConfig', () => {
  it("merges the database's sync settings into its schema config", () => {
    expect(buildSchemaConfig(database()).sync).toEqual({
      mode: 'poll',
      interval: 30,
      safety_net: 600,
      change_column: 'updated',
    });
  });
});

describe('buildFailureMessage', () => {
  it('passes on what the user can act on, and hides the rest', () => {
    expect(
      buildFailureMessage(
        new SchemaConfigError([{ path: 'tables[0].name', message: 'no such table' }]),
      ),
    ).toEqual({ message: 'Invalid schema config: tables[0].name: no such table', expected: true });
    expect(buildFailureMessage(new ApiError('source_unavailable', 'Access denied.'))).toEqual({
      message: 'Access denied.',
      expected: true,
    });
    expect(buildFailureMessage(new BuildError('The database was deleted.')).message).toBe(
      'The database was deleted.',
    );
    const hidden = buildFailureMessage(
      new Error('connect ECONNREFUSED 10.1.2.3:3306 at /srv/x.ts'),
    );
    expect(hidden.expected).toBe(false);
    expect(hidden.message).not.toMatch(/10\.1\.2\.3|\/srv/);
  });
});
