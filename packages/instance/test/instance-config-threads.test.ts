import { ConfigError } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { resolveInstanceConfig } from '../src/instance-config.ts';

const source = 'mysql://root@127.0.0.1:3306/shop';

describe('the query thread count (--threads, REPLIX_THREADS)', () => {
  it.each(['0', '-1', '257', '2.5', 'two', 'Infinity', '1e9'])(
    'refuses %j at start, naming the setting and its range',
    (threads) => {
      for (const resolve of [
        () => resolveInstanceConfig({ source, threads }, {}),
        () => resolveInstanceConfig({ source }, { REPLIX_THREADS: threads }),
      ]) {
        expect(resolve).toThrow(ConfigError);
        expect(resolve).toThrow(/REPLIX_THREADS.*must be a whole number of threads from 1 to 256/);
      }
    },
  );

  it('takes a count in range, the flag over the variable, and 1 when neither is set', () => {
    expect(resolveInstanceConfig({ source, threads: '4' }, { REPLIX_THREADS: '2' }).threads).toBe(
      4,
    );
    expect(resolveInstanceConfig({ source }, { REPLIX_THREADS: '256' }).threads).toBe(256);
    expect(resolveInstanceConfig({ source }, {}).threads).toBe(1);
  });
});
