import { describe, expect, it } from 'vitest';
import { keysFileText } from '../src/adapters/drivers/instance-key-set.ts';
import { type InstanceLaunch, launchEnvironment } from '../src/adapters/drivers/instance-launch.ts';

const launch: InstanceLaunch = {
  instanceId: 'i',
  databaseId: 'd',
  buildId: 'b',
  artifactDir: '/artifact',
  sourceUrl: 'mysql://reader@db.internal/shop',
  ssh: undefined,
  keySecretHex: 'ab'.repeat(32),
  keys: {
    keyIds: ['1111111111111111', '2222222222222222'],
    adminKeyIds: ['cccccccccccccccc', '3333333333333333'],
  },
  replicationId: 'rx_d',
  replicas: 1,
  settings: {
    instanceSize: 'xs',
    taskCpu: 0.25,
    taskMemoryMb: 512,
    syncMode: 'cdc',
    syncInterval: 1,
    logLevel: 'info',
    safetyNet: 3600,
  },
  replicationPaused: true,
};

describe('the launch contract with the instance', () => {
  it('passes query and admin key ids apart, and the stored replication state', () => {
    const env = launchEnvironment(launch, '/data/keys.json');
    expect(env).toMatchObject({
      REPLIX_KEY_IDS: '1111111111111111,2222222222222222',
      REPLIX_ADMIN_KEY_IDS: 'cccccccccccccccc,3333333333333333',
      REPLIX_KEYS_FILE: '/data/keys.json',
      REPLIX_REPLICATION_PAUSED: '1',
    });
    const running = launchEnvironment({ ...launch, replicationPaused: false }, '/k');
    expect(running.REPLIX_REPLICATION_PAUSED).toBe('0');
    const noAdmins = launchEnvironment({ ...launch, keys: { keyIds: [], adminKeyIds: [] } }, '/k');
    expect([noAdmins.REPLIX_KEY_IDS, noAdmins.REPLIX_ADMIN_KEY_IDS]).toEqual(['', '']);
  });

  it("passes the size's memory and longest query, and malloc's huge pages", () => {
    const env = launchEnvironment(launch, '/k');
    expect(env.REPLIX_MEMORY_CAP_MB).toBe('512');
    expect(env.GLIBC_TUNABLES).toBe('glibc.malloc.hugetlb=1');
    expect(env.REPLIX_QUERY_TIMEOUT_MAX_MS).toBe('5000');
    const xl = { ...launch.settings, instanceSize: 'xl', taskCpu: 4, taskMemoryMb: 8192 };
    expect(launchEnvironment({ ...launch, settings: xl }, '/k').REPLIX_QUERY_TIMEOUT_MAX_MS).toBe(
      '60000',
    );
  });

  it("passes the plan's key rate limit, and none when the launch has none", () => {
    const limited = launchEnvironment(
      { ...launch, rateLimit: { quota: 50, windowSeconds: 1 } },
      '/k',
    );
    expect(limited).toMatchObject({ REPLIX_RATE_LIMIT: '50', REPLIX_RATE_LIMIT_WINDOW: '1' });
    const open = launchEnvironment(launch, '/k');
    expect(open.REPLIX_RATE_LIMIT).toBeUndefined();
    expect(open.REPLIX_RATE_LIMIT_WINDOW).toBeUndefined();
  });

  it('runs one query thread per whole vCPU of the size, at least one', () => {
    expect(launchEnvironment(launch, '/k').REPLIX_THREADS).toBe('1');
    const threadsFor = (taskCpu: number) =>
      launchEnvironment({ ...launch, settings: { ...launch.settings, taskCpu } }, '/k')
        .REPLIX_THREADS;
    expect([0.5, 1, 2, 4].map(threadsFor)).toEqual(['1', '1', '2', '4']);
  });

  it('writes the keys file as {"keyIds": […], "adminKeyIds": […]}, one line', () => {
    const text = keysFileText(launch.keys);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.trimEnd()).not.toContain('\n');
    expect(JSON.parse(text)).toEqual({
      keyIds: ['1111111111111111', '2222222222222222'],
      adminKeyIds: ['cccccccccccccccc', '3333333333333333'],
    });
  });
});
