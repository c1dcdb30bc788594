import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSchemaConfig } from '@replix/engine';
import { deriveApiKey, newKeyId, newKeySecret } from '@replix/instance-protocol';
import { decodeEnvironment, type Environment } from '@replix/runtime';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ARTIFACT_VARIABLES,
  applyLaunchOverrides,
  resolveArtifactConfig,
} from '../src/artifact-config.ts';
import { ApiKeyVerifier } from '../src/http/api-keys.ts';
import { readKeysFile, watchKeysFile } from '../src/http/keys-file-watcher.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'replix-artifact-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function writeArtifact(schemaConfig: unknown, buildHash = 'abcdef012345') {
  writeFileSync(join(dir, 'schema-config.json'), JSON.stringify(schemaConfig));
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ buildId: 'b', databaseId: 'd', buildHash, release: '0.1.0', files: {} }),
  );
}

const secret = 'ab'.repeat(32);
/** The launch variables as resolveArtifactConfig decodes them. */
const launchVariables = (env: Environment) => decodeEnvironment(ARTIFACT_VARIABLES, env);

describe('resolveArtifactConfig', () => {
  it('reads the artifact and the launch environment', () => {
    writeArtifact({ sync: { mode: 'cdc', interval: 5 }, memory_cap_mb: 256 });
    const keyId = newKeyId();
    const launch = resolveArtifactConfig(
      dir,
      { port: '0' },
      {
        REPLIX_SOURCE_URL: 'mysql://u:p@db:3306/shop',
        REPLIX_KEY_SECRET: secret,
        REPLIX_KEY_IDS: keyId,
        REPLIX_KEYS_FILE: '/run/keys.json',
        REPLIX_PORT_FILE: '/run/port',
        REPLIX_REPLICATION_ID: 'rx_abc',
        REPLIX_REPLICATION_PAUSED: '1',
        REPLIX_SYNC_MODE: 'poll',
        REPLIX_SYNC_INTERVAL: '30',
        REPLIX_SAFETY_NET: '600',
        REPLIX_MEMORY_CAP_MB: '1024',
        REPLIX_LOG_LEVEL: 'warn',
      },
    );
    expect(launch.instance).toMatchObject({
      sourceUrl: 'mysql://u:p@db:3306/shop',
      keyIds: [keyId],
      generatedKey: false,
      buildHash: 'abcdef012345',
      logLevel: 'warn',
      host: '127.0.0.1',
      port: 0,
      portFile: '/run/port',
    });
    expect(launch.instance.schemaConfig.sync).toEqual({
      mode: 'poll',
      interval: 30,
      safety_net: 600,
    });
    // The smaller cap wins: the config's own 256 MB stays under the task's 1024 MB.
    expect(launch.instance.schemaConfig.memory_cap_mb).toBe(256);
    expect(launch).toMatchObject({
      keysFile: '/run/keys.json',
      replicationId: 'rx_abc',
      replicationPaused: true,
      ssh: undefined,
    });
  });

  it('keeps the artifact settings without overrides, and flags win over the environment', () => {
    writeArtifact({ sync: { mode: 'poll', interval: 7 } });
    const launch = resolveArtifactConfig(
      dir,
      { source: 'postgres://u@h/db', logLevel: 'debug', host: '0.0.0.0', port: 8080 },
      { REPLIX_SOURCE_URL: 'mysql://u@h/db', REPLIX_LOG_LEVEL: 'warn' },
    );
    expect(launch.instance).toMatchObject({
      sourceUrl: 'postgres://u@h/db',
      logLevel: 'debug',
      host: '0.0.0.0',
      port: 8080,
      generatedKey: true,
    });
    expect(launch.instance.schemaConfig.sync).toMatchObject({ mode: 'poll', interval: 7 });
    expect(launch.replicationPaused).toBe(false);
  });

  it('reads the SSH settings, defaulting the port', () => {
    writeArtifact({});
    const launch = resolveArtifactConfig(
      dir,
      {},
      {
        REPLIX_SOURCE_URL: 'mysql://u@h/db',
        REPLIX_SSH_HOST: 'bastion',
        REPLIX_SSH_USER: 'tunnel',
        REPLIX_SSH_PRIVATE_KEY: 'KEY',
      },
    );
    expect(launch.ssh).toEqual({ host: 'bastion', port: 22, user: 'tunnel', privateKey: 'KEY' });
  });

  it.each([
    [{}, 'A source is required'],
    [{ REPLIX_SYNC_MODE: 'push' }, 'REPLIX_SYNC_MODE must be cdc or poll, not "push".'],
    [{ REPLIX_SYNC_INTERVAL: '0' }, 'REPLIX_SYNC_INTERVAL must be a positive number of seconds'],
    [{ REPLIX_SAFETY_NET: '-1' }, 'REPLIX_SAFETY_NET must be a number of seconds >= 0'],
    [{ REPLIX_MEMORY_CAP_MB: 'lots' }, 'REPLIX_MEMORY_CAP_MB must be a positive number of MB'],
    [
      { REPLIX_QUERY_TIMEOUT_MAX_MS: '2.5' },
      'REPLIX_QUERY_TIMEOUT_MAX_MS must be an integer number of milliseconds >= 10',
    ],
    [{ REPLIX_REPLICATION_PAUSED: 'maybe' }, 'REPLIX_REPLICATION_PAUSED must be 0 or 1'],
    [{ REPLIX_REPLICATION_ID: 'Bad-Id' }, 'REPLIX_REPLICATION_ID must be 1 to 56'],
    [{ REPLIX_KEY_SECRET: 'xyz' }, 'REPLIX_KEY_SECRET must be 64 hex digits'],
    [{ REPLIX_SSH_HOST: 'bastion' }, 'REPLIX_SSH_HOST needs REPLIX_SSH_USER'],
  ])('rejects %o with a clear message', (env, message) => {
    writeArtifact({});
    const source = Object.keys(env).length ? { REPLIX_SOURCE_URL: 'mysql://u@h/db' } : {};
    expect(() => resolveArtifactConfig(dir, {}, { ...source, ...env })).toThrow(message);
  });

  it('reads admin key ids from REPLIX_ADMIN_KEY_IDS beside the query key ids', () => {
    writeArtifact({});
    const [query, adminA, adminB] = [newKeyId(), newKeyId(), newKeyId()];
    const launch = resolveArtifactConfig(
      dir,
      {},
      {
        REPLIX_SOURCE_URL: 'mysql://u@h/db',
        REPLIX_KEY_SECRET: secret,
        REPLIX_KEY_IDS: query,
        REPLIX_ADMIN_KEY_IDS: `${adminA}, ${adminB}`,
      },
    );
    expect(launch.instance).toMatchObject({
      keyIds: [query],
      adminKeyIds: [adminA, adminB],
      generatedKey: false,
    });
    const without = resolveArtifactConfig(
      dir,
      {},
      { REPLIX_SOURCE_URL: 'mysql://u@h/db', REPLIX_KEY_SECRET: secret, REPLIX_KEY_IDS: query },
    );
    expect(without.instance.adminKeyIds).toEqual([]);
    expect(() =>
      resolveArtifactConfig(
        dir,
        {},
        {
          REPLIX_SOURCE_URL: 'mysql://u@h/db',
          REPLIX_KEY_SECRET: secret,
          REPLIX_ADMIN_KEY_IDS: 'NOT-HEX',
        },
      ),
    ).toThrow('REPLIX_ADMIN_KEY_IDS must list key ids of 16 lowercase hex digits.');
  });

  it('makes one query key and one distinct admin key when no secret is given', () => {
    writeArtifact({});
    const { instance } = resolveArtifactConfig(dir, {}, { REPLIX_SOURCE_URL: 'mysql://u@h/db' });
    expect(instance.generatedKey).toBe(true);
    expect(instance.keyIds).toHaveLength(1);
    expect(instance.adminKeyIds).toHaveLength(1);
    expect(instance.adminKeyIds[0]).not.toBe(instance.keyIds[0]);
  });

  it('refuses a folder that is not an artifact', () => {
    expect(() => resolveArtifactConfig(dir, {}, { REPLIX_SOURCE_URL: 'mysql://u@h/db' })).toThrow(
      `${dir} is not a build artifact: it has no readable manifest.json.`,
    );
    writeArtifact({}, 'nothex');
    expect(() => resolveArtifactConfig(dir, {}, { REPLIX_SOURCE_URL: 'mysql://u@h/db' })).toThrow(
      'no valid buildHash',
    );
  });

  it("caps query.timeout_ms by the instance size's longest query", () => {
    const cap = launchVariables({ REPLIX_QUERY_TIMEOUT_MAX_MS: '5000' });
    expect(applyLaunchOverrides(parseSchemaConfig({}), cap).query.timeout_ms).toBe(2000);
    const long = parseSchemaConfig({ query: { timeout_ms: 30_000 } });
    expect(applyLaunchOverrides(long, cap).query.timeout_ms).toBe(5000);
    expect(applyLaunchOverrides(long, launchVariables({})).query.timeout_ms).toBe(30_000);
  });

  it('applies the task memory as the cap when the config has none', () => {
    const config = applyLaunchOverrides(
      parseSchemaConfig({}),
      launchVariables({ REPLIX_MEMORY_CAP_MB: '512' }),
    );
    expect(config.memory_cap_mb).toBe(512);
  });
});

describe('watchKeysFile', () => {
  const log = pino({ level: 'silent' });
  const waitFor = async (check: () => boolean) => {
    const deadline = Date.now() + 2000;
    while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return check();
  };

  it('follows the file, and keeps the keys when it goes missing or malformed', async () => {
    const secret = newKeySecret();
    const [a, b] = [newKeyId(), newKeyId()];
    const header = (id: string) => `Bearer ${deriveApiKey(secret, id)}`;
    const keys = new ApiKeyVerifier(secret, [a, b]);
    const path = join(dir, 'keys.json');
    const write = (text: string) => {
      writeFileSync(`${path}.tmp`, text);
      renameSync(`${path}.tmp`, path);
    };
    const watcher = watchKeysFile(path, keys, log, 50);
    try {
      // Missing at start: the launch keys stay.
      expect(keys.verifyHeader(header(a))).toBe(true);
      write(JSON.stringify({ keyIds: [b] }));
      expect(await waitFor(() => !keys.verifyHeader(header(a)))).toBe(true);
      expect(keys.verifyHeader(header(b))).toBe(true);
      write('{"keyIds": ["NOT-HEX"]}');
      await new Promise((r) => setTimeout(r, 200));
      expect(keys.verifyHeader(header(b))).toBe(true);
      rmSync(path);
      await new Promise((r) => setTimeout(r, 200));
      expect(keys.verifyHeader(header(b))).toBe(true);
      write(JSON.stringify({ keyIds: [a] }));
      expect(await waitFor(() => keys.verifyHeader(header(a)))).toBe(true);
      expect(keys.verifyHeader(header(b))).toBe(false);
    } finally {
      watcher.close();
    }
  });

  it('moves keys between scopes as the file says, admin ids included', async () => {
    const secret = newKeySecret();
    const [a, b] = [newKeyId(), newKeyId()];
    const header = (id: string) => `Bearer ${deriveApiKey(secret, id)}`;
    const keys = new ApiKeyVerifier(secret, [a, b]);
    const path = join(dir, 'keys.json');
    writeFileSync(path, JSON.stringify({ keyIds: [a], adminKeyIds: [b] }));
    const watcher = watchKeysFile(path, keys, log, 50);
    try {
      expect(keys.scopeOf(header(a))).toBe('query');
      expect(keys.scopeOf(header(b))).toBe('admin');
      writeFileSync(`${path}.tmp`, JSON.stringify({ keyIds: [a, b] }));
      renameSync(`${path}.tmp`, path);
      expect(await waitFor(() => keys.scopeOf(header(b)) === 'query')).toBe(true);
    } finally {
      watcher.close();
    }
  });
});

describe('readKeysFile', () => {
  const write = (content: unknown) => {
    const path = join(dir, 'keys.json');
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  const [a, b] = ['0123456789abcdef', 'fedcba9876543210'];

  it('reads query and admin key ids', () => {
    expect(readKeysFile(write({ keyIds: [a], adminKeyIds: [b] }))).toEqual({
      keyIds: [a],
      adminKeyIds: [b],
    });
  });

  it('reads a file written before scopes existed as query keys only', () => {
    expect(readKeysFile(write({ keyIds: [a, b] }))).toEqual({ keyIds: [a, b], adminKeyIds: [] });
  });

  it.each([
    [{ adminKeyIds: [a] }],
    [{ keyIds: [a], adminKeyIds: ['NOT-HEX'] }],
    [{ keyIds: [a], adminKeyIds: a }],
    ['null'],
    ['[]'],
  ])('refuses %o, naming the expected format', (content) => {
    expect(() => readKeysFile(write(content))).toThrow('expected {"keyIds"');
  });
});
