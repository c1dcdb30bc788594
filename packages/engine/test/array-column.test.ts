/**
 * Array columns: stored as their JSON text, written as is, tested for NULL, by CONTAINS,
 * CONTAINED BY, OVERLAPS and CARDINALITY.
 */
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import type { SourceSchema } from '../src/source-schema.ts';
import { MAX_DICTIONARY } from '../src/storage/column-builder.ts';
import { buildGeneration, column, loadGeneration, runQuery, TEST_META, table } from './fixtures.ts';

const source: SourceSchema = {
  tables: [
    table('films', [
      column('id', 'int', false),
      column('title', 'string', false),
      {
        name: 'features',
        type: 'array',
        nullable: true,
        sourceType: 'text[]',
        elementType: 'string',
      },
      {
        name: 'grid',
        type: 'array',
        nullable: true,
        sourceType: 'bigint[]',
        elementType: 'bigint',
      },
    ]),
  ],
};
const schema = compileSchema(source, parseSchemaConfig({}));
const rows = [
  [
    1,
    'A',
    '["Trailers","Behind \\"the\\" Scenes",null,"NULL"]',
    '[[1,9223372036854775807],[null,-2]]',
  ],
  [2, 'B', null, '[]'],
  [3, 'C', '[]', null],
];
const generation = loadGeneration(schema, { films: rows });

function failure(text: string): { code: string; message: string } {
  try {
    new QueryEngine(schema).execute(generation, text, TEST_META);
  } catch (error) {
    if (!(error instanceof EngineError)) throw error;
    return { code: error.code, message: error.message };
  }
  throw new Error(`expected "${text}" to fail`);
}

const misuse = (name: string) => ({
  code: 'executor_error',
  message: `Field "${name}" is an array: test it with CONTAINS (...), CONTAINED BY (...), OVERLAPS (...), CARDINALITY(${name}) or IS [NOT] NULL; it cannot be compared, sorted, grouped or aggregated.`,
});

describe('array columns', () => {
  it('write the stored JSON text as is, not as a string', () => {
    const text = new QueryEngine(schema).execute(
      generation,
      'films { id features grid }',
      TEST_META,
    );
    expect(text.slice(0, text.indexOf(',"meta":'))).toBe(
      '{"data":[' +
        '{"id":1,"features":["Trailers","Behind \\"the\\" Scenes",null,"NULL"],"grid":[[1,9223372036854775807],[null,-2]]},' +
        '{"id":2,"features":null,"grid":[]},' +
        '{"id":3,"features":[],"grid":null}]',
    );
  });

  it('write as is once a chunk holds too many distinct arrays for a dictionary', () => {
    const many = Array.from({ length: MAX_DICTIONARY + 2 }, (_, i) => [
      i + 1,
      't',
      i === 5 ? null : `["v${i}"]`,
      null,
    ]);
    const flat = buildGeneration(schema, { films: many }, 65_536);
    const body = runQuery(schema, flat, 'films { features } ORDER BY id DESC LIMIT 3');
    expect(body.data).toEqual([
      { features: [`v${MAX_DICTIONARY + 1}`] },
      { features: [`v${MAX_DICTIONARY}`] },
      { features: [`v${MAX_DICTIONARY - 1}`] },
    ]);
    expect(runQuery(schema, flat, 'films (id = 6) { features }').data).toEqual([
      { features: null },
    ]);
  });

  it('take IS NULL and IS NOT NULL', () => {
    expect(runQuery(schema, generation, 'films (features IS NULL) { id }').data).toEqual([
      { id: 2 },
    ]);
    expect(runQuery(schema, generation, 'films (grid IS NOT NULL) { id }').data).toEqual([
      { id: 1 },
      { id: 2 },
    ]);
  });

  it('refuse comparisons, LIKE, IN and BETWEEN', () => {
    expect(failure("films (features = '[]') { id }")).toEqual(misuse('features'));
    expect(failure('films (grid != 1) { id }')).toEqual(misuse('grid'));
    expect(failure("films (features LIKE '%a%') { id }")).toEqual(misuse('features'));
    expect(failure("films (features ILIKE '%a%') { id }")).toEqual(misuse('features'));
    expect(failure("films (features IN ('a', 'b')) { id }")).toEqual(misuse('features'));
    expect(failure('films (grid BETWEEN 1 AND 2) { id }')).toEqual(misuse('grid'));
  });

  it('take CONTAINS, CONTAINED BY and OVERLAPS, elements compared by their type', () => {
    const ids = (text: string) =>
      runQuery(schema, generation, text).data.map((row: { id: number }) => row.id);
    expect(ids("films (features CONTAINS ('Trailers')) { id }")).toEqual([1]);
    expect(ids("films (features CONTAINS ('Trailers', 'NULL')) { id }")).toEqual([1]);
    expect(ids("films (features CONTAINS ('Trailers', 'x')) { id }")).toEqual([]);
    // A NULL equals no element, in the list as in the array.
    expect(ids("films (features CONTAINS ('Trailers', NULL)) { id }")).toEqual([]);
    expect(ids("films (features CONTAINED BY ('Trailers', 'NULL', 'x')) { id }")).toEqual([3]);
    expect(ids("films (features OVERLAPS ('x', 'NULL')) { id }")).toEqual([1]);
    // Every dimension's elements; a BIGINT past 2^53 by every digit.
    expect(ids('films (grid CONTAINS (9223372036854775807, -2)) { id }')).toEqual([1]);
    expect(ids('films (grid OVERLAPS (9223372036854775806)) { id }')).toEqual([]);
    expect(ids('films (grid CONTAINED BY (1)) { id }')).toEqual([2]);
  });

  it('take CARDINALITY, the number of elements of every dimension', () => {
    const ids = (text: string) =>
      runQuery(schema, generation, text).data.map((row: { id: number }) => row.id);
    expect(ids('films (CARDINALITY(features) = 4) { id }')).toEqual([1]);
    expect(ids('films (CARDINALITY(grid) > 3 OR CARDINALITY(features) = 0) { id }')).toEqual([
      1, 3,
    ]);
    expect(ids('films (CARDINALITY(grid) IN (0, 4)) { id }')).toEqual([1, 2]);
    expect(ids('films (CARDINALITY(features) IS NULL) { id }')).toEqual([2]);
    expect(failure('films (CARDINALITY(title) > 1) { id }').message).toBe(
      'CARDINALITY needs an array field; "title" is string.',
    );
    expect(failure("films (title CONTAINS ('A')) { id }").message).toContain(
      'CONTAINS needs an array field; "title" is string.',
    );
    expect(failure('films (features CONTAINS (1)) { id }').message).toBe(
      'Field "features" holds text (quote the value: \'…\'); 1 is not one.',
    );
  });

  it('bound their lists as IN lists are bounded', () => {
    const list = Array.from({ length: 1001 }, (_, i) => `'v${i}'`).join(', ');
    expect(failure(`films (features OVERLAPS (${list})) { id }`)).toEqual({
      code: 'query_too_complex',
      message:
        'The OVERLAPS list on "features" has 1001 values (limit: 1000 values per IN list). Query the values in batches of at most 1000.',
    });
  });

  it('refuse ORDER BY, grouping and aggregates', () => {
    expect(failure('films { id } ORDER BY features')).toEqual(misuse('features'));
    expect(failure('films { features COUNT(*) }')).toEqual(misuse('features'));
    expect(failure('films { SUM(grid) }')).toEqual(misuse('grid'));
    expect(failure('films { COUNT(features) }')).toEqual(misuse('features'));
  });
});
