import { describe, expect, it } from 'vitest';
import { formatCell, formatRows, formatSummary } from '../src/format-rows.ts';
import { parseJsonLossless, prettyJson } from '../src/json-text.ts';

describe('formatRows', () => {
  it('aligns columns in selection order, numbers right, nested values as compact JSON', () => {
    const rows = parseJsonLossless(
      '[{"name":"Ada","id":1,"orders":[{"id":10}],"owner":null},' +
        '{"name":"Bartholomew","id":12345,"orders":[],"owner":{"a":1}}]',
    ) as Record<string, unknown>[];
    expect(formatRows(rows).split('\n')).toEqual([
      'name            id  orders       owner',
      '-----------  -----  -----------  -------',
      'Ada              1  [{"id":10}]  null',
      'Bartholomew  12345  []           {"a":1}',
    ]);
  });

  it('keeps every digit of big numbers and decimals as the instance sent them', () => {
    const rows = parseJsonLossless(
      '[{"big":18446744073709551615,"price":12.50,"n":[9007199254740993]}]',
    ) as Record<string, unknown>[];
    expect(formatRows(rows).split('\n')[2]).toBe('18446744073709551615  12.50  [9007199254740993]');
  });

  it('joins keys over all rows, escapes line breaks and says when there are no rows', () => {
    expect(formatRows([{ a: 'x\ny' }, { b: true }])).toBe(
      ['a     b', '----  ----', 'x\\ny', '      true'].join('\n'),
    );
    expect(formatRows([])).toBe('(no rows)');
    expect(formatCell('Þór')).toBe('Þór');
  });

  it('counts code points for width', () => {
    expect(formatRows([{ n: 'Þórður' }, { n: 'ab' }]).split('\n')).toEqual([
      'n',
      '------',
      'Þórður',
      'ab',
    ]);
  });
});

describe('formatSummary', () => {
  it('reads counts, timing and snapshot from meta, with the next cursor when present', () => {
    const meta = {
      pagination: { count: 2, total_matched: 40, next_cursor: 'abc' },
      timing_ms: 0.04213,
      snapshot: { swap_count: 3, age_ms: 812 },
    };
    expect(formatSummary(meta)).toBe(
      '2 rows of 40 matched · 0.042 ms · snapshot swap 3, age 812 ms · next cursor: abc',
    );
    expect(formatSummary({ ...meta, pagination: { count: 1, total_matched: 1 } })).toBe(
      '1 row of 1 matched · 0.042 ms · snapshot swap 3, age 812 ms',
    );
  });
});

describe('prettyJson', () => {
  it('indents like JSON.stringify(…, null, 2) while copying tokens verbatim', () => {
    const text =
      '{"data":[{"a":1,"b":"x, y: {z}","c":[],"d":{}}],"meta":{"e":"q\\"uote","f":[1,[2]]}}';
    expect(prettyJson(text)).toBe(JSON.stringify(JSON.parse(text), null, 2));
    expect(prettyJson('{"n":18446744073709551615,"d":12.50}')).toBe(
      '{\n  "n": 18446744073709551615,\n  "d": 12.50\n}',
    );
    expect(prettyJson('{ "a" : [ ] , "s":"\\u00e9" }')).toBe('{\n  "a": [],\n  "s": "\\u00e9"\n}');
  });
});
