import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll } from 'vitest';
import { ProcessDriver } from '../src/adapters/drivers/process/process-driver.ts';
import { runDriverContract } from './driver-contract.ts';
import { killInstanceProcesses } from './reconciler-fixtures.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'replix-process-contract-'));

runDriverContract('process', () => new ProcessDriver({ dataDir, log: pino({ level: 'silent' }) }), {
  // The endpoints live in the router process, which a control-plane crash leaves running.
  crash: async () => {},
  killReplica: async (driver, instanceId, ordinal) => {
    const folder = (driver as ProcessDriver).replicaFolderOf(instanceId, ordinal);
    process.kill(Number(readFileSync(join(folder, 'pid'), 'utf8')), 'SIGKILL');
  },
});

afterAll(() => {
  // Whatever a failed test left running.
  killInstanceProcesses(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
});
