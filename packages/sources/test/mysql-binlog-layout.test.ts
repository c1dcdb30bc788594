import { describe, expect, it } from 'vitest';
import { enumValues } from '../src/mysql/mysql-binlog-layout.ts';

describe('enumValues', () => {
  it('reads the values of an ENUM or SET type as information_schema prints it', () => {
    expect(enumValues("enum('small','large')")).toEqual(['small', 'large']);
    expect(enumValues("enum('a,b','it''s','back\\\\slash','\"q\"')")).toEqual([
      'a,b',
      "it's",
      'back\\slash',
      '"q"',
    ]);
    expect(enumValues("set('','x')")).toEqual(['', 'x']);
    expect(enumValues('int(11)')).toEqual([]);
  });
});
