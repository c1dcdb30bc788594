/**
 * JSON paths (`doc->'addr'->'city'`, `doc->'tags'->0`): selected as JSON, filtered with typed
 * comparisons, sorted, with the documented rule for a path that is missing or of another type.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/errors.ts';
import { jsonAt, jsonText, jsonValueAt, parseJson } from '../src/exec/json-path.ts';
import { QueryEngine } from '../src/query-engine.ts';
import { compileSchema } from '../src/schema/compile-schema.ts';
import { parseSchemaConfig } from '../src/schema/schema-config.ts';
import { buildGeneration, column, TEST_META, table } from './fixtures.ts';

const schema = compileSchema(
  { tables: [table('t', [column('id', 'int', false), column('doc', 'json'), column('n', 'int')])] },
  parseSchemaConfig({}),
);
const rows = [
  [
    1,
    '{"name":"Ada","age":36,"tags":["a","b"],"big":12345678901234567890.5,"addr":{"city":"London"}}',
    1,
  ],
  [2, '{"name":"Bo","age":"31","tags":[],"addr":{"city":"Paris"}}', 2],
  [3, null, 3],
  [4, '{"name":"Cy","age":null,"addr":{"city":"Åre"}}', 4],
  [5, '{"name":"Di","age":41.5,"flag":true,"addr":"none"}', 5],
  [6, '[1,2,{"name":"in an array"}]', 6],
];
// Two rows a chunk: every path runs over several chunks.
const generation = buildGeneration(schema, { t: rows }, 2);
const engine = new QueryEngine(schema);
const answer = (text: string) => engine.execute(generation, text, TEST_META).toString();
const ids = (text: string) =>
  (JSON.parse(answer(text)).data as { id: number }[]).map((row) => row.id);

function refusal(text: string): string {
  try {
    engine.execute(generation, text, TEST_META);
  } catch (error) {
    if (error instanceof EngineError) return error.message;
    throw error;
  }
  throw new Error(`not refused: ${text}`);
}

describe('JSON paths', () => {
  it('select the value as JSON, keyed by the last step, null where missing', () => {
    const text = answer(
      "t (id IN (1, 2, 5, 6)) { id doc->'addr'->'city' doc->'tags'->1 doc->'big' doc->2->'name' }",
    );
    expect(text).toContain(
      '"data":[{"id":1,"city":"London","tags_1":"b","big":12345678901234567890.5,"name":null},' +
        '{"id":2,"city":"Paris","tags_1":null,"big":null,"name":null},' +
        '{"id":5,"city":null,"tags_1":null,"big":null,"name":null},' +
        '{"id":6,"city":null,"tags_1":null,"big":null,"name":"in an array"}]',
    );
    expect(JSON.parse(answer("t (id = 1) { doc->'addr' doc->'tags' }")).data).toEqual([
      { addr: { city: 'London' }, tags: ['a', 'b'] },
    ]);
  });

  it('compare only values of the literal’s type', () => {
    expect(ids("t (doc->'age' > 30) { id }")).toEqual([1, 5]);
    expect(ids("t (doc->'age' = '31') { id }")).toEqual([2]);
    expect(ids("t (doc->'age' != 36) { id }")).toEqual([5]);
    expect(ids("t (doc->'age' IN (36, '31')) { id }")).toEqual([1, 2]);
    expect(ids("t (doc->'age' BETWEEN 30 AND 40) { id }")).toEqual([1]);
    expect(ids("t (doc->'flag' = true) { id }")).toEqual([5]);
    expect(
      ids("t (doc->'addr'->'city' LIKE 'P%' OR doc->'addr'->'city' ILIKE 'åre') { id }"),
    ).toEqual([2, 4]);
  });

  it('take a missing path, a JSON null and a NULL field alike as NULL', () => {
    expect(ids("t (doc->'age' IS NULL) { id }")).toEqual([3, 4, 6]);
    expect(ids("t (doc->'age' IS NOT NULL) { id }")).toEqual([1, 2, 5]);
    expect(ids("t (doc->'addr'->'city' IS NULL) { id }")).toEqual([3, 5, 6]);
    expect(ids("t (doc->'age' = NULL) { id }")).toEqual([]);
  });

  it('sort numbers, then text, then booleans, NULLs last ascending', () => {
    expect(ids("t { id } ORDER BY doc->'age'")).toEqual([1, 5, 2, 3, 4, 6]);
    expect(ids("t { id } ORDER BY doc->'age' DESC, id")).toEqual([3, 4, 6, 2, 5, 1]);
    expect(ids("t { id } ORDER BY doc->'name', doc->'age'")).toEqual([1, 2, 4, 5, 3, 6]);
  });

  it('bind another path’s steps from a cached plan of the same shape, never the first’s', () => {
    expect(ids("t (doc->'age' > 30) { id }")).toEqual([1, 5]);
    expect(ids("t (doc->'big' > 30) { id }")).toEqual([1]);
    expect(JSON.parse(answer("t (id = 1) { doc->'name' }")).data).toEqual([{ name: 'Ada' }]);
    expect(JSON.parse(answer("t (id = 1) { doc->'age' }")).data).toEqual([{ age: 36 }]);
  });

  it('are echoed as written', () => {
    const meta = JSON.parse(answer("t (doc->'a'->0 = 1) { doc->'b' } ORDER BY doc->'c' DESC")).meta;
    expect(meta.query).toEqual({
      fields: ["doc->'b'"],
      filter: "doc->'a'->0 = 1",
      order_by: [{ field: "doc->'c'", direction: 'DESC' }],
    });
  });

  it('refuse what they cannot do', () => {
    expect(refusal("t (n->'a' = 1) { id }")).toBe(`n->'a' reads into a JSON field; "n" is int.`);
    expect(refusal("t { n->'a' }")).toBe(`n->'a' reads into a JSON field; "n" is int.`);
    expect(refusal("t (doc->'a' < true) { id }")).toBe(
      "doc->'a' is compared with a boolean: use = or != only.",
    );
    expect(refusal("t (doc->'a' BETWEEN 1 AND 'z') { id }")).toContain('two bounds of one type');
    expect(refusal("t { doc->'a' COUNT(*) }")).toContain('cannot be selected beside aggregates');
    const deep = Array.from({ length: 33 }, (_, i) => `->'k${i}'`).join('');
    expect(refusal(`t (doc${deep} = 1) { id }`)).toContain(
      'JSON path too deep: more than 32 steps',
    );
  });
});

describe('the JSON path examples of docs/instance-api.md', () => {
  const events = compileSchema(
    { tables: [table('events', [column('id', 'int', false), column('payload', 'json')])] },
    parseSchemaConfig({}),
  );
  const eventRows = [
    [1, '{"kind":"click","user":{"name":"Ada","age":36},"items":[10,11]}'],
    [2, '{"kind":"view","user":{"name":"Bo","age":29,"email":"bo@example.com"}}'],
    [3, '{"kind":"buy","user":{"name":"Cy","age":41},"items":[]}'],
  ];
  const eventGeneration = buildGeneration(events, { events: eventRows }, 2);
  const docs = readFileSync(new URL('../../../docs/instance-api.md', import.meta.url), 'utf8');
  const block = /```query no-run: [^\n]*json-paths\.test\.ts[^\n]*\n([\s\S]*?)```/.exec(docs);

  it('run, each answering rows', () => {
    const queries = (block?.[1] ?? '').split('\n').filter((line) => line.trim() !== '');
    expect(queries).toHaveLength(3);
    const engine = new QueryEngine(events);
    for (const query of queries) {
      const data = JSON.parse(engine.execute(eventGeneration, query, TEST_META)).data;
      expect(data.length, query).toBeGreaterThan(0);
    }
    expect(
      JSON.parse(engine.execute(eventGeneration, queries[0] as string, TEST_META)).data[0],
    ).toEqual({
      id: 1,
      name: 'Ada',
      items_0: 10,
    });
  });
});

describe('reading one value of JSON text without parsing it all', () => {
  it('finds what a whole parse finds, for any document and path', () => {
    const step = fc.oneof(fc.constantFrom('a', 'b', 'é', 'k"q', 'x\\y', ''), fc.nat({ max: 3 }));
    const key = fc.constantFrom('a', 'b', 'é', 'k"q', 'x\\y', '');
    const document = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer(),
        fc.string(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(
        document,
        fc.array(step, { maxLength: 4 }),
        fc.boolean(),
        (value, steps, spaced) => {
          const text = JSON.stringify(value, null, spaced ? 1 : undefined);
          const whole = jsonAt(parseJson(text), steps);
          const scanned = jsonValueAt(text, steps);
          // An object or array is kept as its stored text, layout included: compared parsed.
          const normal = (found: unknown) =>
            found === undefined ? undefined : JSON.stringify(JSON.parse(jsonText(found)));
          expect(normal(scanned)).toBe(normal(whole));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('keeps the last of a repeated key, as a parse does, and reads past escapes', () => {
    expect(jsonValueAt('{"a":1,"a":2}', ['a'])).toEqual(parseJson('2'));
    expect(jsonValueAt('{"a\\"b":{"c":"x\\"}"}}', ['a"b', 'c'])).toBe('x"}');
    expect(jsonValueAt('{"a":[1,{"b":true}]}', ['a', 1, 'b'])).toBe(true);
    expect(jsonValueAt('not json', ['a'])).toBeUndefined();
  });
});

describe('JSON paths over hostile documents', () => {
  it('serve, test and sort a value nested 100,000 deep without a stack of that depth', () => {
    const depth = 100_000;
    const deep = `{"a":${'['.repeat(depth)}1${']'.repeat(depth)},"b":2}`;
    const hostile = compileSchema(
      { tables: [table('t', [column('id', 'int', false), column('doc', 'json')])] },
      parseSchemaConfig({}),
    );
    const deepGeneration = buildGeneration(
      hostile,
      {
        t: [
          [1, deep],
          [2, '{"a":[3]}'],
        ],
      },
      2,
    );
    const deepEngine = new QueryEngine(hostile);
    const run = (text: string) => deepEngine.execute(deepGeneration, text, TEST_META).toString();
    const served = run("t (id = 1) { doc->'a' doc->'b' }");
    expect(served.length).toBeGreaterThan(2 * depth);
    expect(JSON.parse(run("t (doc->'a'->0 IS NOT NULL AND doc->'b' = 2) { id }")).data).toEqual([
      { id: 1 },
    ]);
    // Arrays sort by their text: '[[…' after '[3]'.
    expect(JSON.parse(run("t { id } ORDER BY doc->'a' DESC")).data).toEqual([{ id: 1 }, { id: 2 }]);
  });
});
