import { REFUSAL_STATUS, type RefusalCode } from '@replix/runtime';
import { expect, it } from 'vitest';
import { INSTANCE_ERRORS } from '../src/errors.ts';

it("has every refusal Node's parser makes in the instance's error catalogue, with its status", () => {
  const codes = Object.keys(REFUSAL_STATUS) as RefusalCode[];
  expect(codes.length).toBeGreaterThan(0);
  for (const code of codes) expect(INSTANCE_ERRORS[code].status, code).toBe(REFUSAL_STATUS[code]);
});
