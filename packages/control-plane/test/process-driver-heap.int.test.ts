import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newKeyId, newKeySecret } from '@replix/instance-protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InstanceLaunch } from '../src/adapters/drivers/instance-launch.ts';
import { ProcessDriver } from '../src/adapters/drivers/process/process-driver.ts';

/** A stand-in instance that answers every request with its own heap limit in MB. */
const REPORT_HEAP = `
const { createServer } = require('node:http');
const { writeFileSync } = require('node:fs');
const { getHeapStatistics } = require('node:v8');
const server = createServer((_req, res) => {
  res.end(JSON.stringify({ heapLimitMb: getHeapStatistics().heap_size_limit / 1048576 }));
});
server.listen(Number(process.argv[1]), '127.0.0.1', () =>
  writeFileSync(process.env.REPLIX_PORT_FILE, String(server.address().port)),
);
`;

function launchOfSize(taskMemoryMb: number): InstanceLaunch {
  return {
    instanceId: randomUUID(),
    databaseId: randomUUID(),
    buildId: randomUUID(),
    artifactDir: '/nonexistent',
    sourceUrl: 'mysql://root@127.0.0.1:1/unused',
    ssh: undefined,
    keySecretHex: newKeySecret().toString('hex'),
    keys: { keyIds: [newKeyId()], adminKeyIds: [newKeyId()] },
    replicationId: 'rx_test',
    replicas: 1,
    settings: {
      instanceSize: 'custom',
      taskCpu: 0.25,
      taskMemoryMb,
      syncMode: 'cdc',
      syncInterval: 1,
      logLevel: 'info',
      safetyNet: 3600,
    },
    replicationPaused: false,
  };
}

describe('the process driver sizes the heap', () => {
  let dataDir: string;
  let driver: ProcessDriver;

  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'replix-driver-heap-'));
    driver = new ProcessDriver({
      dataDir,
      log: pino({ level: 'silent' }),
      programArgs: (_launch, port) => ['-e', REPORT_HEAP, String(port)],
    });
  });
  afterAll(async () => {
    await driver?.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    [512, 358],
    [2048, 1433],
  ])('gives a %i MB instance a %i MB heap (70%)', async (taskMemoryMb, heapLimitMb) => {
    const launch = launchOfSize(taskMemoryMb);
    const handle = await driver.start(launch);
    try {
      const reported = (await (await fetch(handle.privateUrl)).json()) as { heapLimitMb: number };
      expect(reported.heapLimitMb).toBe(heapLimitMb);
    } finally {
      await driver.stop(launch.instanceId);
    }
  });
});
