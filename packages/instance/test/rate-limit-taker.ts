import { parentPort, workerData } from 'node:worker_threads';
import { RateLimiter, type SharedRateLimits } from '../src/http/rate-limiter.ts';

/** A worker thread of rate-limiter.test.ts: takes `takes` requests of `keyId` on the shared limiter. */
const { shared, keyId, takes } = workerData as {
  shared: SharedRateLimits;
  keyId: string;
  takes: number;
};
const limiter = new RateLimiter(shared.policy, { shared });
let allowed = 0;
for (let i = 0; i < takes; i++) if (limiter.take(keyId).allowed) allowed++;
parentPort?.postMessage(allowed);
