import { Buffer } from 'node:buffer';
import { Type } from 'typebox';
import type { VariableOptions } from './decode-environment.ts';

/** `1`/`true` or `0`/`false` (default `0`), decoded to a boolean. */
export function flagVariable(options: VariableOptions) {
  return Type.Codec(
    Type.Union(
      [Type.Literal('0'), Type.Literal('1'), Type.Literal('true'), Type.Literal('false')],
      {
        default: '0',
        ...options,
      },
    ),
  )
    .Decode((text) => text === '1' || text === 'true')
    .Encode((flag) => (flag ? '1' : '0'));
}

/** 64 hex digits, decoded to the 32 bytes they spell. */
export function hexKeyVariable(options: VariableOptions) {
  return Type.Codec(Type.String({ pattern: '^[0-9a-fA-F]{64}$', ...options }))
    .Decode((text) => Buffer.from(text, 'hex'))
    .Encode((key) => key.toString('hex'));
}
