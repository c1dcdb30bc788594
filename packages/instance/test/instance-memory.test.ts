import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseSchemaConfig } from '@replix/engine';
import {
  heapFlags,
  heapIsBounded,
  INSTANCE_MALLOC_ENVIRONMENT,
  memorySizeMb,
} from '@replix/instance-protocol';
import { ConfigError } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import type { InstanceConfig } from '../src/instance-config.ts';
import { queryThreadYoungMb, withMemorySize } from '../src/snapshot/instance-memory.ts';

function flagValue(flags: string[], name: string): number {
  const flag = flags.find((f) => f.startsWith(`${name}=`));
  return Number(flag?.split('=')[1]);
}

describe('heapFlags', () => {
  it.each([512, 1024, 2048, 4096, 8192])(
    'bound old space plus young generation to 70%% of %i MB',
    (memoryMb) => {
      const flags = heapFlags(memoryMb);
      const oldSpace = flagValue(flags, '--max-old-space-size');
      const semiSpace = flagValue(flags, '--max-semi-space-size');
      expect(oldSpace + 3 * semiSpace).toBe(Math.floor(memoryMb * 0.7));
    },
  );

  it('keep the young generation small on a small instance', () => {
    expect(heapFlags(512)).toEqual(['--max-old-space-size=334', '--max-semi-space-size=8']);
    expect(flagValue(heapFlags(65_536), '--max-semi-space-size')).toBe(32);
  });
});

describe('queryThreadYoungMb', () => {
  it("gives a query thread three 8 MB semi-spaces, or the instance's own when smaller", () => {
    expect(queryThreadYoungMb([])).toBe(24);
    expect(queryThreadYoungMb(heapFlags(65_536))).toBe(24);
    expect(queryThreadYoungMb(heapFlags(256))).toBe(12);
    expect(queryThreadYoungMb(['--max-semi-space-size=1'])).toBe(3);
  });
});

describe('heapIsBounded', () => {
  it('sees a --max-old-space-size among the Node flags', () => {
    expect(heapIsBounded(['--max-old-space-size=334'])).toBe(true);
    expect(heapIsBounded(['--enable-source-maps'])).toBe(false);
  });
});

describe('memorySizeMb', () => {
  it('takes the flag over REPLIX_MEMORY_MB, and neither means unbounded', () => {
    expect(memorySizeMb('512', { REPLIX_MEMORY_MB: '1024' })).toBe(512);
    expect(memorySizeMb(undefined, { REPLIX_MEMORY_MB: '1024' })).toBe(1024);
    expect(memorySizeMb(undefined, {})).toBeUndefined();
    expect(memorySizeMb(undefined, { REPLIX_MEMORY_MB: '' })).toBeUndefined();
  });

  it('refuses what is not a whole number of MB of at least 128', () => {
    for (const given of ['abc', '100', '512.5', '-1']) {
      expect(() => memorySizeMb(given, {})).toThrow(ConfigError);
    }
    expect(() => memorySizeMb(undefined, { REPLIX_MEMORY_MB: '64' })).toThrow(/at least 128/);
  });
});

describe('withMemorySize', () => {
  const config = (memoryCapMb: number | null): InstanceConfig => ({
    sourceUrl: 'mysql://root@127.0.0.1/db',
    schemaConfig: parseSchemaConfig({ memory_cap_mb: memoryCapMb }),
    host: '127.0.0.1',
    port: 0,
    keySecret: Buffer.alloc(32),
    keyIds: [],
    adminKeyIds: [],
    generatedKey: false,
    buildHash: 'testbuild000',
    logLevel: 'silent',
  });

  it('caps the snapshot at the memory size, keeping a smaller cap the config had', () => {
    expect(withMemorySize(config(null), 512).schemaConfig.memory_cap_mb).toBe(512);
    expect(withMemorySize(config(2048), 512).schemaConfig.memory_cap_mb).toBe(512);
    expect(withMemorySize(config(100), 512).schemaConfig.memory_cap_mb).toBe(100);
  });
});

/** The kernel's transparent huge page mode (`always`, `madvise`, `never`), if it has them. */
function transparentHugePages(): string | undefined {
  const path = '/sys/kernel/mm/transparent_hugepage/enabled';
  return existsSync(path) ? /\[(\w+)\]/.exec(readFileSync(path, 'utf8'))?.[1] : undefined;
}

/** glibc's version (`2.36`), when Node runs on glibc. */
const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header
  .glibcVersionRuntime;
const hugePagesOnRequest =
  transparentHugePages() === 'madvise' && glibc !== undefined && Number(glibc.split('.')[1]) >= 35;

describe('INSTANCE_MALLOC_ENVIRONMENT', () => {
  /** KiB of huge pages a Node process holds after filling a 64 MiB SharedArrayBuffer. */
  function hugePagesOfProcess(env: Record<string, string>): number {
    const script = `
      new Uint8Array(new SharedArrayBuffer(64 << 20)).fill(1);
      const rollup = require('node:fs').readFileSync('/proc/self/smaps_rollup', 'utf8');
      process.stdout.write(/AnonHugePages:\\s+(\\d+) kB/.exec(rollup)[1]);`;
    const out = execFileSync(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });
    return Number(out);
  }

  // Only where huge pages are given on request (madvise) does the process's own ask show:
  // with "always" every process has them, with "never" none, and other C libraries lack it.
  it.skipIf(!hugePagesOnRequest)(
    "puts a snapshot's large arrays on huge pages, which a process started without it lacks",
    () => {
      expect(hugePagesOfProcess({})).toBe(0);
      expect(hugePagesOfProcess({ ...INSTANCE_MALLOC_ENVIRONMENT })).toBeGreaterThan(32 * 1024);
    },
  );
});
