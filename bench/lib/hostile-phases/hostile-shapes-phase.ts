import { Worker } from 'node:worker_threads';
import type { HostilePhase } from '../hostile-phase.ts';

/**
 * Issue 12's hostile shapes (`packages/instance/test/hostile-shapes.ts`) back to back from
 * `clients` clients, on a worker thread so reading their big answers never delays the
 * runner's timers: answers by status and code.
 */
export function hostileShapesPhase(clients: number): HostilePhase {
  return {
    name: `issue 12's hostile shapes, ${clients} clients`,
    async run(child, seconds) {
      const worker = new Worker(new URL('../hostile-worker.ts', import.meta.url), {
        workerData: { url: child.url, apiKey: child.apiKey, clients },
      });
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const done = new Promise<[string, number][]>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const outcomes = Object.fromEntries(await done);
      await worker.terminate();
      return { outcomes };
    },
  };
}
