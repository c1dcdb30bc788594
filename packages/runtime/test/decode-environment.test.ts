import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/config-error.ts';
import { decodeEnvironment, environmentReference } from '../src/config/decode-environment.ts';
import { flagVariable, hexKeyVariable } from '../src/config/variable-codecs.ts';

const SCHEMA = Type.Object({
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 4000,
    problem: 'must be an integer from 0 to 65535',
    echo: true,
  }),
  NAME: Type.Optional(Type.String({ problem: 'is not a name' })),
  FLAG: flagVariable({ problem: 'must be 1 or 0' }),
  KEY: Type.Optional(hexKeyVariable({ problem: 'must be 64 hex digits (32 bytes)' })),
  NEEDED: Type.String({ problem: 'must be text' }),
});

describe('decodeEnvironment', () => {
  it('fills in defaults, leaves optional variables out and decodes codecs', () => {
    const decoded = decodeEnvironment(SCHEMA, { NEEDED: 'x', FLAG: 'true', KEY: 'ab'.repeat(32) });
    expect(decoded).toEqual({ PORT: 4000, FLAG: true, NEEDED: 'x', KEY: Buffer.alloc(32, 0xab) });
    expect(Object.isFrozen(decoded)).toBe(true);
    expect(decodeEnvironment(SCHEMA, { NEEDED: 'x', PORT: '', FLAG: '' })).toEqual({
      PORT: 4000,
      FLAG: false,
      NEEDED: 'x',
    });
  });

  it('reads numbers as Number does, and refuses what the schema refuses, naming the variable', () => {
    expect(decodeEnvironment(SCHEMA, { NEEDED: 'x', PORT: '0' }).PORT).toBe(0);
    const bad = (env: Record<string, string>) => () =>
      decodeEnvironment(SCHEMA, { NEEDED: 'x', ...env });
    expect(bad({ PORT: '1.5' })).toThrow(ConfigError);
    expect(bad({ PORT: '1.5' })).toThrow('PORT must be an integer from 0 to 65535, not "1.5".');
    expect(bad({ PORT: '70000' })).toThrow('not "70000"');
    expect(bad({ FLAG: 'yes' })).toThrow('FLAG must be 1 or 0.');
    // A secret's bad value is never quoted back.
    expect(bad({ KEY: 'secret' })).toThrow('KEY must be 64 hex digits (32 bytes).');
    expect(() => decodeEnvironment(SCHEMA, {})).toThrow('NEEDED is required.');
  });

  it('lists the variables with their defaults as the environment spells them', () => {
    expect(environmentReference(SCHEMA)).toEqual([
      { name: 'PORT', default: '4000' },
      { name: 'NAME', default: undefined },
      { name: 'FLAG', default: '0' },
      { name: 'KEY', default: undefined },
      { name: 'NEEDED', default: undefined },
    ]);
  });
});
