import type { VariableOptions } from '@replix/runtime';
import { Type } from 'typebox';

/** The key id pattern of `api-keys.ts`: 16 lowercase hex digits. */
export const KEY_ID_PATTERN = /^[0-9a-f]{16}$/;

/** Comma-separated key ids, blanks around them ignored; decoded to the ids. Default none. */
export function keyIdListVariable(options: VariableOptions) {
  return Type.Codec(
    Type.String({
      pattern: '^\\s*([0-9a-f]{16})?\\s*(,\\s*([0-9a-f]{16})?\\s*)*$',
      default: '',
      ...options,
    }),
  )
    .Decode((text) =>
      text
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .Encode((ids) => ids.join(','));
}
