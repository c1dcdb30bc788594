import process from 'node:process';
import type { InstanceConfig } from '../instance-config.ts';

/** A query thread's young generation at most: three semi-spaces of 8 MB. */
const QUERY_THREAD_YOUNG_MB = 24;

/**
 * The young generation of a query thread beside the main one (a worker's
 * `resourceLimits.maxYoungGenerationSizeMb`): `QUERY_THREAD_YOUNG_MB`, or the process's own when
 * `--max-semi-space-size` makes that smaller. Unbounded, V8 lets each thread's young generation
 * grow to 3 × 64 MB under a burst of requests and keeps it: resident memory each extra thread
 * would pay for garbage alone. A query thread's garbage is its requests', short-lived and small:
 * 8 MB semi-spaces scavenge it cheaply.
 */
export function queryThreadYoungMb(execArgv: readonly string[] = process.execArgv): number {
  const flag = execArgv.findLast((arg) => arg.startsWith('--max-semi-space-size='));
  const semi = Number(flag?.slice('--max-semi-space-size='.length));
  return semi > 0 ? Math.min(QUERY_THREAD_YOUNG_MB, 3 * semi) : QUERY_THREAD_YOUNG_MB;
}

/** `config` with its snapshot capped at `memoryMb`, keeping a smaller cap the config had. */
export function withMemorySize(config: InstanceConfig, memoryMb: number): InstanceConfig {
  const cap = Math.min(memoryMb, config.schemaConfig.memory_cap_mb ?? Number.POSITIVE_INFINITY);
  return { ...config, schemaConfig: { ...config.schemaConfig, memory_cap_mb: cap } };
}
