import { type LaunchVariables, launchVariables } from '@replix/instance-protocol';
import { decodeEnvironment } from '@replix/runtime';
import { describe, expect, it } from 'vitest';
import { ARTIFACT_VARIABLES } from '../src/artifact-config.ts';

// The contract between the drivers and the instance program: what the protocol writes for a
// launch, the instance decodes as the same launch.

const LAUNCH: LaunchVariables = {
  sourceUrl: 'postgres://replix:secret@db.internal:5432/shop',
  keySecretHex: 'ab'.repeat(32),
  keyIds: ['0123456789abcdef', 'fedcba9876543210'],
  adminKeyIds: ['00112233445566ff'],
  keysFile: '/data/keys.json',
  replicationId: 'replix_0123abcd',
  replicationPaused: true,
  logLevel: 'warn',
  syncMode: 'poll',
  syncInterval: 5,
  safetyNet: 3600,
  memoryCapMb: 1024,
  queryTimeoutMaxMs: 15_000,
  threads: 2,
  rateLimit: { quota: 600, windowSeconds: 60 },
  ssh: { host: 'bastion.internal', port: 2222, user: 'tunnel', privateKey: 'KEY' },
};

describe('the launch variables', () => {
  const env = launchVariables(LAUNCH);

  it('are all variables the instance program declares, besides the C library’s', () => {
    const declared = Object.keys(ARTIFACT_VARIABLES.properties);
    const written = Object.keys(env).filter((name) => name !== 'GLIBC_TUNABLES');
    expect(written.length).toBeGreaterThan(15);
    expect(written.filter((name) => !declared.includes(name))).toEqual([]);
  });

  it('decode as the launch they were written from', () => {
    const decoded = decodeEnvironment(ARTIFACT_VARIABLES, env);
    expect(decoded).toMatchObject({
      REPLIX_SOURCE_URL: LAUNCH.sourceUrl,
      REPLIX_KEYS_FILE: LAUNCH.keysFile,
      REPLIX_REPLICATION_ID: LAUNCH.replicationId,
      REPLIX_REPLICATION_PAUSED: true,
      REPLIX_LOG_LEVEL: 'warn',
      REPLIX_SYNC_MODE: 'poll',
      REPLIX_SYNC_INTERVAL: 5,
      REPLIX_SAFETY_NET: 3600,
      REPLIX_MEMORY_CAP_MB: 1024,
      REPLIX_QUERY_TIMEOUT_MAX_MS: 15_000,
      REPLIX_THREADS: 2,
      REPLIX_RATE_LIMIT: 600,
      REPLIX_RATE_LIMIT_WINDOW: 60,
      REPLIX_SSH_HOST: 'bastion.internal',
      REPLIX_SSH_PORT: 2222,
      REPLIX_SSH_USER: 'tunnel',
      REPLIX_SSH_PRIVATE_KEY: 'KEY',
    });
    expect(String(decoded.REPLIX_KEY_IDS)).toContain(LAUNCH.keyIds[0]);
    expect(String(decoded.REPLIX_ADMIN_KEY_IDS)).toContain(LAUNCH.adminKeyIds[0]);
  });

  it('leave out the rate limit and the tunnel a launch has none of', () => {
    const plain = launchVariables({ ...LAUNCH, rateLimit: undefined, ssh: undefined });
    expect(Object.keys(plain).filter((name) => /RATE_LIMIT|SSH/.test(name))).toEqual([]);
    expect(plain.REPLIX_REPLICATION_PAUSED).toBe('1');
    expect(launchVariables({ ...LAUNCH, replicationPaused: false }).REPLIX_REPLICATION_PAUSED).toBe(
      '0',
    );
  });
});
